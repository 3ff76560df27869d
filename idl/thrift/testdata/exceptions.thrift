// Exceptions: with fields, empty, with a field named "message".
namespace go petrel.test.exceptions

enum ErrorCode {
  UNKNOWN = 0
  NOT_FOUND = 404
  INTERNAL = 500
}

exception NotFound {
  1: string message
  2: string resource
}

exception ServiceError {
  1: ErrorCode code = ErrorCode.INTERNAL
  2: optional string detail
  3: optional NotFound cause
}

exception Bare {}

service Store {
  binary get(1: string key) throws (1: NotFound not_found, 2: ServiceError err)
  void put(1: string key, 2: binary value) throws (1: ServiceError err, 2: Bare bare)
}
