struct S {
  1: i32 foo
  2: i32 get_foo
}
