namespace go petrel.test.common

enum Level {
  DEBUG
  INFO
  WARN = 10
  ERROR
}

const i32 MAX_ITEMS = 100
