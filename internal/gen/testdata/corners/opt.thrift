namespace go petrel.gen.opt

struct Inner {
  1: i32 a
}

enum Color {
  RED = 1
}
