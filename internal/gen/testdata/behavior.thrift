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

// Wide is a large struct: a container of them is not allocated whole before
// its elements are read (the header's size is checked against one input
// byte per element only).
struct Wide {
  1: string s1
  2: string s2
  3: string s3
  4: string s4
  5: string s5
  6: string s6
  7: string s7
  8: string s8
  9: string s9
  10: string s10
  11: string s11
  12: string s12
  13: string s13
  14: string s14
  15: string s15
  16: string s16
  17: string s17
  18: string s18
  19: string s19
  20: string s20
  21: string s21
  22: string s22
  23: string s23
  24: string s24
  25: string s25
  26: string s26
  27: string s27
  28: string s28
  29: string s29
  30: string s30
  31: string s31
  32: string s32
  33: string s33
  34: string s34
  35: string s35
  36: string s36
  37: string s37
  38: string s38
  39: string s39
  40: string s40
}

// Small holds containers whose elements may take a byte or two of input
// each: reading one allocates for the elements read, not for the size its
// header announces (checked against those one or two bytes only).
struct Small {
  1: map<string, string> names
  2: list<string> strs
  3: list<binary> bins
  4: list<i64> nums
  5: set<string> tags
  6: list<i32> i32s
}

struct Wides {
  1: list<Wide> items
  2: map<i32, Wide> by_id
}

// Detail is an exception with optional fields: its Error prints their
// values, not the addresses they are held at.
exception Detail {
  1: optional i32 code
  2: optional string why
  3: optional Mood mood
  4: optional Pair where
  5: i64 n
  6: optional uuid id
}

// Choice is a union: a Choice with more than one field set is not sent.
union Choice {
  1: i32 num
  2: string text
  3: Pair pair
}

// Choices holds unions in a field and in containers.
struct Choices {
  1: optional Choice one
  2: list<Choice> many
  3: map<string, list<Choice>> nested
  4: Pair plain
  5: map<Choice, i32> keyed
  6: map<list<Choice>, i32> list_keyed
}

service Chooser {
  Choice choose(1: Choices in)
}

// Negative zero, which a Go constant cannot hold, in constants and defaults.
typedef double Real
const double NEG_ZERO = -0.0
const Real NEG_ZERO_REAL = -0.0
const double POS_ZERO = 0.0
const list<double> ZEROS = [-0.0, 0.0, -0e0]
const NegZeros NEG_ZEROS_STRUCT = {"d": -0.0, "o": -0.0}

struct NegZeros {
  1: double d = -0.0
  2: optional double o = -0.0
  3: Real r = -0.0
}
