struct S {
  1: i32 count = "ten"
}
