include "../enums.thrift"

struct S {
  1: enums.Nope n
}
