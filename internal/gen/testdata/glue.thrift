// Service glue corner cases: names that clash with the glue's (a struct
// named like the client, a function named close, arguments named like
// imports and locals), a typedef of an exception thrown beside it, empty
// containers and binaries as results, a oneway method in a derived service.
namespace go petrel.gen.glue

struct SvcArgs { 1: i32 x }
struct SvcClient { 1: i32 y }
exception E1 { 1: string m }
typedef E1 E1Alias

service Svc {
  void close(1: i32 opts, 2: string x, 3: bool call, 4: i32 client, 5: i32 errors, 6: i32 thrift, 7: i32 context, 8: i32 server, 9: i32 r, 10: i32 err, 11: i32 fmt)
  binary data(1: i32 ID, 2: i32 URLPath) throws (1: E1 a, 2: E1Alias b)
  set<string> tags() throws (1: E1 e)
}

service Svc2 extends Svc {
  oneway void h(1: i32 handler)
}
