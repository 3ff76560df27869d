// Fields whose Go names are methods of generated structs: the generator
// appends "_" (Read_, Error_, FastReadDepth_), so IDLs written for other
// generators, such as throws (1: MyErr error), compile unchanged.
namespace go method_names

exception MyErr {
  1: string message
  2: string error
}

struct S {
  1: binary read
  2: string name
  3: i64 fast_read_depth
  4: optional string validate
}

service Svc {
  S call(1: S read, 2: string error) throws (1: MyErr error)
}
