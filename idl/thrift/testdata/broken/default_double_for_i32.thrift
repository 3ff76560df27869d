struct S {
  1: i32 a = 1.5
}
