struct S {
  1: i32 a
  2: string a
}
