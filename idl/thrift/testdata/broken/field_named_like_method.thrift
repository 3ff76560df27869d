struct S {
  1: binary read
  2: string name
}
