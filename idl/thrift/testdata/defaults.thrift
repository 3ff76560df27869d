// Default values and constants of every kind.
namespace go petrel.test.defaults

enum Status {
  OK = 0
  FAILED = 1
}

typedef i32 Count
typedef Status StatusAlias

const i8 TINY = -128
const i16 SMALL = 0x7fff
const i32 HEX = 0x1F
const i64 BIG = -9223372036854775808
const double PI = 3.14159
const double AVOGADRO = 6.022e23
const double SMALL_EXP = 1E-9
const double WHOLE = 2
const string GREETING = "hello \"world\"\n"
const string SINGLE = 'it\'s'
const binary BLOB = "raw\tbytes"
const bool YES = true
const bool NO = false
const bool ONE = 1
const Status DEFAULT_STATUS = Status.FAILED
const StatusAlias ALIAS_STATUS = 0
const Count TYPED_COUNT = HEX
const list<i32> PRIMES = [2, 3, 5; 7,]
const set<string> NAMES = ["a", "b"]
const map<string, i32> AGES = {"ann": 30, "bob": 41;}
const map<Status, list<string>> MESSAGES = {Status.OK: ["fine"], Status.FAILED: []}
const list<map<string, double>> NESTED = [{"x": 1.5}, {}]
const uuid ID = "00000000-0000-0000-0000-00000000abcd"
const Point ORIGIN = {"x": 0, "y": 0, "label": "origin"}
const list<Point> CORNERS = [ORIGIN, {"x": 1, "y": 1}]

struct Point {
  1: i32 x
  2: i32 y
  3: optional string label
}

struct Defaults {
  1: bool flag = true
  2: byte b = 127
  3: i16 s = -1
  4: i32 i = HEX
  5: i64 l = 1099511627776
  6: double d = 0.5
  7: double d_int = 3
  8: string str = "text"
  9: binary bin = 'bin'
  10: uuid u = "123e4567-e89b-12d3-a456-426614174000"
  11: Status status = Status.OK
  12: Status status_int = 1
  13: StatusAlias alias = Status.FAILED
  14: Count count = 10
  15: list<i32> list_default = [1, 2]
  16: set<string> set_default = ["x"]
  17: map<string, string> map_default = {"k": "v"}
  18: Point point = {"x": 1, "y": 2}
  19: list<Point> points = CORNERS
  20: optional i32 opt = 5
  21: required string req = GREETING
  22: i64 from_enum = Status.FAILED
}
