struct S {
  1: map<string, i32> m = [1, 2]
}
