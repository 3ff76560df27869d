// Corner cases of the generator, each of which once gave Go that did not
// compile (TestCorpus builds and vets the output).
namespace go petrel.gen.corners

// Included packages whose Go names are locals of the generated readers
// (FastReadDepth's block of optional values is opt, of type optionals).
include "opt.thrift"
include "optionals.thrift"

// Included packages whose Go names are predeclared identifiers the
// generated code uses (len, min, int32).
include "len.thrift"
include "min.thrift"
include "int32.thrift"

struct UsesOpt {
  1: optional i32 a
  2: optional i64 b
  3: list<opt.Inner> items
  4: opt.Color color
  5: optional optionals.Mode mode
  6: optionals.Other other
}

struct UsesBuiltinNames {
  1: list<min.Item> items
  2: map<i32, min.Item> by_id
  3: len.Item one
  4: list<len.Item> more
  5: int32.Kind kind
  6: optional int32.Kind maybe
  7: string s
  8: i32 n
}

// Map constants whose keys are lists, sets or maps: Go holds such keys
// through pointers.
typedef list<i32> L
const map<list<i32>, i32> BY_LIST = {[1, 2]: 3}
const map<L, string> BY_L = {[1]: "one"}
const map<set<string>, i32> BY_SET = {["a"]: 1}
const map<map<list<i32>, i32>, i32> BY_MAP = {{[1]: 1}: 2}
const list<map<L, i32>> NESTED = [{[1]: 1}]

struct WithContainerKeys {
  1: map<L, i32> m = {[1]: 2}
}
