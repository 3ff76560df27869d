// Package client is Petrel's RPC client: it sends Thrift calls to a service
// and decodes the replies. Generated code (New<Service>Client) wraps a
// [Client]; [Client.Call] is the one entry point it uses.
//
// # Configuration
//
// [New] takes the callee's service name and options. Every option's comment
// states its default; in short:
//
//   - addresses: [WithHostPorts] (round robin) or [WithResolver], not
//     both; [WithNetwork] ("tcp");
//   - framing: [WithTransport], default TTHeader ([DefaultTransport]); use
//     Framed or Buffered for Apache Thrift servers;
//   - time: [WithConnectTimeout] (500ms), [WithRPCTimeout] (1s for the whole
//     call; 0 for none), per method [WithMethodTimeout] and, per call,
//     [WithCallTimeout];
//   - connections: [WithLongConnection] (the default pool), [WithShortConnection],
//     [WithMuxConnection];
//   - limits: [WithMaxMessageSize] (16 MiB per reply frame);
//   - [WithMiddleware] around every call;
//   - discovery and balancing: [WithResolver] (a discovery.Resolver
//     watched for the service's instances; pooled connections to instances
//     that leave are closed), [WithLoadBalancer] (loadbalance: round robin by
//     default, weighted random, consistent hashing on [WithHashKey], P2C);
//   - governance: [WithRetry] (retries and backup requests), [WithCircuitBreaker]
//     (per method), [WithInstanceBreaker] (per address), [WithTracer];
//     none by default.
//
// # One call
//
// Call fills an rpcinfo.RPCInfo (reachable in middleware with
// rpcinfo.FromContext, valid until Call returns), runs the middleware, picks
// an address, takes a connection from the pool, writes the request with
// transport.WriteMessage (the arguments are encoded straight into the
// connection's output buffer and sent with one flush), reads the reply with
// transport.ReadMessage and decodes it into the result with the result's
// FastRead (one private copy of the reply's bytes for all its strings).
// With TTHeader the request carries the callee service, the
// method, the time left before the call's deadline (milliseconds), the IDL
// service name ([WithIDLServiceName], which generated clients set) and the
// context's metainfo values.
//
// # Errors
//
// Every error Call returns is classified by rpcerr.CodeOf: Timeout (a
// net.Error with Timeout() true), Canceled, Connection, Protocol,
// Application (the server's TApplicationException, reachable with
// errors.As), Overloaded and ShuttingDown (a Petrel server, or a circuit
// breaker, refused the call), or a *rpcerr.BizStatusError (business status
// in TTHeader); see [Client.Call].
// Exceptions the IDL declares are not errors of Call: they are decoded into
// the result struct and the generated stub returns them.
//
// # Pools
//
// The short pool dials per call. The long pool keeps idle connections per
// address (LIFO), never hands out one whose peer closed it
// (netpoll.Connection.IsActive, no I/O), and closes instead of keeping a
// connection after a failed write or read, bad reply bytes, a timeout, a
// cancellation or a reply carrying the server's drop flag ("crrst"); a whole
// reply that is an application exception (other than PROTOCOL_ERROR, after
// which a Petrel server closes the connection) or a business status keeps
// it. The multiplexed pool shares a few connections per address among all
// callers: each request is registered under its sequence id, written under
// the connection's write lock, and the last of a group of concurrent
// writers, or the writer of the 16th frame since the last flush, flushes
// them with one system call; a
// reader goroutine per connection decodes each reply into its caller's
// result and wakes it. A connection that fails fails only the calls waiting
// on it, and the next call dials its replacement.
package client
