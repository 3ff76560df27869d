namespace go petrel.gen.optionals

enum Mode {
  ON = 1
}

struct Other {
  1: optional string s
}
