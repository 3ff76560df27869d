struct S {
  1: i32 a
}

const S V = {"a": 1, "b": 2}
