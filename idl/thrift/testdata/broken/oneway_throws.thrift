exception E {}

service S {
  oneway void fire() throws (1: E e)
}
