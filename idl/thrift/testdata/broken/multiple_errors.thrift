// Several errors in one file, reported together and sorted by position.
struct A {
  1: Unknown x
  1: i32 y
}

struct A {}

service S {
  oneway string f()
}
