senum Old {
  "a"
}
