enum E {
  A = 1
  B = 1
  A = 2
}
