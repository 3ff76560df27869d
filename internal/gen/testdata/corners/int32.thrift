namespace go petrel.gen.int32

enum Kind {
  ONE = 1
}
