// Every type inside containers, and nested containers.
namespace go petrel.test.containers

enum Color { RED, GREEN, BLUE }

struct Point {
  1: i32 x
  2: i32 y
}

typedef map<string, i64> Counters

struct AllContainers {
  1: list<bool> bools
  2: list<byte> bytes
  3: list<i8> int8s
  4: list<i16> int16s
  5: list<i32> int32s
  6: list<i64> int64s
  7: list<double> doubles
  8: list<string> strings
  9: list<binary> binaries
  10: list<uuid> uuids
  11: list<Color> colors
  12: list<Point> points
  13: set<bool> bool_set
  14: set<i8> int8_set
  15: set<i16> int16_set
  16: set<i32> int32_set
  17: set<i64> int64_set
  18: set<double> double_set
  19: set<string> string_set
  20: set<binary> binary_set
  21: set<uuid> uuid_set
  22: set<Color> color_set
  23: set<Point> point_set
  24: map<bool, bool> bool_map
  25: map<i8, byte> int8_map
  26: map<i16, i16> int16_map
  27: map<i32, i32> int32_map
  28: map<i64, i64> int64_map
  29: map<double, double> double_map
  30: map<string, string> string_map
  31: map<binary, binary> binary_map
  32: map<uuid, uuid> uuid_map
  33: map<Color, Point> color_map
  34: map<Point, Color> point_key_map
  35: map<string, list<set<i32>>> nested
  36: list<list<list<i64>>> cube
  37: map<string, map<string, map<string, double>>> deep_maps
  38: list<map<Color, set<string>>> mixed
  39: set<list<i32>> set_of_lists
  40: map<list<string>, set<i64>> container_keys
  41: Counters counters
  42: list<Counters> counter_list
  43: optional list<Point> optional_points
  44: required map<string, Point> required_points
}
