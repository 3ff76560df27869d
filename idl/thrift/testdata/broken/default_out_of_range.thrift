struct S {
  1: i8 small = 128
}
