struct S {
  0: i32 zero
}
