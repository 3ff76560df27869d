// The service the server's tests and benchmarks use.
namespace go echotest

struct Request {
  1: string action
  2: string msg
}

struct Response {
  1: string action
  2: string msg
}

exception Oops {
  1: string why
}

service Echo {
  Response echo(1: Request req) throws (1: Oops oops)
  oneway void notify(1: string msg)
}
