// Unions: fields are optional by nature; a default is allowed.
namespace go petrel.test.unions

struct Payload {
  1: binary data
}

union Value {
  1: i64 int_value
  2: double double_value
  3: string string_value = "none"
  4: Payload payload
  5: list<Value> values
  6: optional bool flag
}

union Empty {}
