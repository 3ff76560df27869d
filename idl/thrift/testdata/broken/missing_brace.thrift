struct S {
  1: i32 a

service T {}
