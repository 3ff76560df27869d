struct S {
  1: i32 a
  2: i32 b
  1: i32 c
}
