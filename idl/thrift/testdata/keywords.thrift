// Names that are Go keywords, predeclared identifiers or common package
// names; a generator must rename or escape them.
namespace go petrel.test.keywords

enum type {
  func = 1
  range = 2
  chan = 3
}

struct go {
  1: string type
  2: i32 func
  3: i64 range
  4: bool chan
  5: string select
  6: string default
  7: string interface
  8: string package
  9: string import
  10: string return
  11: string var
  12: string defer
  13: string fallthrough
  14: string goto
  15: string switch
  16: string case
  17: string break
  18: string continue
  19: string else
  20: string for
  21: string if
  22: string struct_
  23: string nil
  24: string error_code
  25: string len
  26: string make
  27: string new
  28: string context
  29: string fmt
}

service select {
  go range(1: type type, 2: i32 func, 3: string ctx)
  void defer(1: go go)
}
