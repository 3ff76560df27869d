struct S {
  1: other.Thing t
}
