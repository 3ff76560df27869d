struct S {
  1: i32 foo_bar
  2: i32 FooBar
}
