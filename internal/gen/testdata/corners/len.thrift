namespace go petrel.gen.len

struct Item {
  1: string s
}
