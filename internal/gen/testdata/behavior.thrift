// Fixtures for the generator's behaviour tests (run in the corpus test's
// temporary module): unknown fields, required fields, wrong wire types,
// depth limits, large strings handed over by reference.
namespace go petrel.gen.behavior

// V1 is an old version of V2: it knows only field 1.
struct V1 {
  1: i32 id
}

// V2 adds fields of every wire type.
struct V2 {
  1: i32 id
  2: string name
  3: optional bool flag
  4: list<i64> ids
  5: map<string, V1> things
  6: optional double ratio
  7: bool other
}

struct NeedsName {
  1: required string name
  2: optional i32 age
}

// WrongTypes has the ids of V2 with other types: a reader of WrongTypes
// given a V2 skips every field but id.
struct WrongTypes {
  1: i32 id
  2: i64 name
  3: optional string flag
  4: set<i64> ids
  5: i32 things
}

// StringIDs has V2's field 4 with another element type: reading its ids as
// V2's list<i64> fails (a list whose elements are not what the IDL says is
// invalid data, not a field to skip).
struct StringIDs {
  4: list<string> ids
}

struct Node {
  1: i32 value
  2: optional Node next
}

struct Blob {
  1: string text
  2: binary data
  3: list<string> parts
}

// Fixed has only fixed-size fields: its BLength is one constant.
struct Fixed {
  1: bool a
  2: byte b
  3: i16 c
  4: i32 d
  5: i64 e
  6: double f
  7: uuid g
}

struct Bulk {
  1: list<i64> i64s
  2: list<i32> i32s
  3: list<double> doubles
  4: set<i16> i16s
  5: map<i32, double> scores
}

service Base {
  void ping()
}

service Echo extends Base {
  string echo(1: string msg, 2: i32 times) throws (1: Oops oops)
  oneway void fire(1: V1 v)
}

exception Oops {
  1: string why
}

// Many holds containers of structs: read with one allocation for all the
// structs of each container.
struct Many {
  1: list<V1> items
  2: map<i32, Node> by_id
}

enum Mood { CALM = 1, GLAD = 2 }

// Opts has several optional scalars: read with one allocation for all.
struct Opts {
  1: optional i32 a
  2: optional i64 b
  3: optional string c
  4: optional bool d
  5: optional double e
  6: optional Mood mood
  7: optional uuid u
}

struct Pair {
  1: i32 a
  2: i32 b
}

// Holder holds structs directly: those that are not optional share one
// block when read.
struct Holder {
  1: Pair first
  2: Pair second
  3: optional Pair third
}

// CycA and CycB are a cycle where CycB holds strings only through CycA: CycB
// is read through a private copy of its input all the same.
struct CycA {
  1: optional CycB b
  2: string s
}

struct CycB {
  1: optional CycA a
}
