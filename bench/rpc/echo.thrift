// The echo service of bench/cmd/rpcbench: the request's action and message
// come back unchanged. The same messages as rpc/echo.proto.
namespace go echo

struct Request {
  1: string action
  2: string msg
}

struct Response {
  1: string action
  2: string msg
}

service EchoService {
  Response echo(1: Request req)
}
