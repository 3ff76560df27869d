namespace go petrel.gen.min

struct Item {
  1: i32 a
}
