service S {
  oneway i32 fire()
}
