// Included from main.thrift by a path relative to it; itself includes a
// file found only through the include directory.
include "common.thrift"

namespace go petrel.test.shared

struct Base {
  1: string id
  2: common.Level level
}

exception Failure {
  1: string message
  2: common.Level level = common.Level.ERROR
}

service BaseService {
  void ping()
}
