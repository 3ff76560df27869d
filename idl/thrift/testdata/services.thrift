// Services: empty, extends, oneway, void, throws, implicit argument ids.
namespace go petrel.test.services

exception Oops {
  1: string why
}

struct Request {
  1: string body
}

service Empty {}

service Base {
  void ping()
  i32 version()
}

service Derived extends Base {
  oneway void notify(1: string event)
  Request echo(1: Request req)
  list<Request> batch(1: list<Request> reqs, 2: i32 limit = 10) throws (1: Oops oops)
  void legacy(string name, i32 count)
  map<string, i64> stats();
  bool check(1: Request req),
}

service Leaf extends Derived {
  void leaf()
}
