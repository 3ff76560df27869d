service S {
  void f(1: i32 x
}
