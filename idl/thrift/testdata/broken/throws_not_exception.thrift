struct NotAnException {}

service S {
  void f() throws (1: NotAnException e)
}
