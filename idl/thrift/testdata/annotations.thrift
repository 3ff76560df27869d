// Annotations on every element that takes them.
namespace go petrel.test.annotations (package.doc = "annotated")

typedef i64 (js.type = "Long") Timestamp (go.type = "int64", doc = "unix nanos")

enum Kind {
  A = 1 (display = "Alpha")
  B (display = "Beta"; deprecated)
} (go.enum = "true")

const i32 ANSWER = 42 (note = "the answer")

struct Annotated {
  1: required string name (go.tag = "json:\"name\"", validate = "min=1")
  2: optional list<string> (cpp.template = "std::vector") tags
  3: map<string, i32> (cpp.template = "std::map") scores (a = "1", b = "2")
  4: Timestamp at
  5: Kind kind = Kind.A (db.column = "kind")
} (go.struct = "annotated", final)

union Choice {
  1: string text (max = "10")
} (union.note = "x")

exception Problem {
  1: string message (sensitive = "false")
} (code = "500")

service Annotations {
  Annotated get(1: string name (arg = "yes")) throws (1: Problem p (throw = "yes")) (method.timeout = "100ms")
  oneway void fire() (idempotent)
} (service.version = "2")
