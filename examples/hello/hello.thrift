// The Petrel hello example: one service with a plain method, a method that
// declares an exception, and a oneway method.
namespace go hello

// EchoRequest is what a caller sends to Echo.
struct EchoRequest {
  1: string action
  2: string msg
}

// EchoResponse carries the request's fields back.
struct EchoResponse {
  1: string action
  2: string msg
}

// InvalidName is Greet's declared exception.
exception InvalidName {
  1: string name
  2: string reason
}

service Hello {
  // Echo returns the request's action and message.
  EchoResponse echo(1: EchoRequest req)

  // Greet greets name; an empty or over-long name is an InvalidName.
  string greet(1: string name) throws (1: InvalidName invalid)

  // Notify records an event; the caller does not wait for the server.
  oneway void notify(1: string event)
}
