struct T {
  1: i32 a
)
