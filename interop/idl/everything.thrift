// A struct for every Thrift type, used to check that Petrel's generated code
// and Apache Thrift's (compiler 0.17.0) read each other's bytes, binary and
// compact. The uuid type is not here: compiler 0.17.0 rejects it (see
// petrel_only.thrift). InteropService is for the RPC interop tests.
namespace go everything

enum Color {
  RED = 1
  GREEN = 2
  BLUE = 3
  NEGATIVE = -4
}

typedef i64 Timestamp
typedef list<string> Names

struct Inner {
  1: i32 id
  2: string name
  3: optional i64 weight
}

union Choice {
  1: i32 number
  2: string text
  3: Inner inner
  4: list<string> words
  5: binary raw
}

exception Oops {
  1: i32 code
  2: string message
  3: optional Inner detail
}

struct Everything {
  // scalars
  1: bool flag
  2: byte octet
  3: i8 tiny
  4: i16 short_int
  5: i32 int32_value
  6: i64 int64_value
  7: double ratio
  8: string text
  9: binary blob
  10: Color color
  11: Timestamp stamp
  // structs, union, exception
  12: Inner inner
  13: Choice choice
  14: Oops oops
  // containers of scalars
  15: list<bool> bools
  16: list<byte> octets
  17: list<i16> shorts
  18: list<i32> ints
  19: list<i64> longs
  20: list<double> doubles
  21: set<i32> int_set
  22: map<i64, double> long_to_double
  // containers of strings and binaries
  23: list<string> strings
  24: set<string> string_set
  25: map<string, string> string_map
  26: list<binary> blobs
  27: Names names
  // containers of structs and enums
  28: list<Inner> inners
  29: map<string, Inner> inner_by_name
  30: set<Color> color_set
  31: list<Color> colors
  32: map<Color, i32> color_count
  // nested containers
  33: map<string, list<set<i32>>> nested
  34: list<map<i32, string>> list_of_maps
  35: list<list<i64>> matrix
  // optional fields (left unset in some values, set in others)
  40: optional bool opt_flag
  41: optional i32 opt_int
  42: optional string opt_text
  43: optional binary opt_blob
  44: optional Inner opt_inner
  45: optional list<i32> opt_ints
  46: optional map<string, i64> opt_map
  47: optional Color opt_color
  48: optional double opt_ratio
  // default values
  50: i32 def_int = 42
  51: string def_text = "hello"
  52: double def_ratio = 2.5
  53: Color def_color = Color.GREEN
  54: list<i32> def_list = [1, 2, 3]
  55: map<string, i32> def_map = {"one": 1}
  56: bool def_flag = true
  57: optional i64 opt_def = 7
  // required fields
  60: required i32 req_int
  61: required string req_text
}

service InteropService {
  Everything echo(1: Everything value) throws (1: Oops oops)
  i64 add(1: i32 a, 2: i64 b)
  oneway void notify(1: string message)
  void ping()
  Choice pick(1: Color color, 2: list<Inner> inners) throws (1: Oops oops)
}
