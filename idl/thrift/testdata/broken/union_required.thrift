union U {
  1: required i32 a
}
