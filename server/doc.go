// Package server serves Thrift services over TCP: one port speaks TTHeader
// (Kitex), Framed and Buffered (Apache Thrift), detected per connection from
// its first bytes, and every reply goes back in the request's protocol and
// payload encoding (binary or compact).
//
//	s := server.New(server.WithListenAddress(":9000"), server.WithMaxQPS(50000))
//	if err := s.RegisterService(echo.EchoServiceInfo, &EchoImpl{}); err != nil { ... }
//	go s.Run()
//	...
//	s.Stop(ctx) // graceful
//
// # Serving
//
// The server runs on a [netpoll.EventLoop]. A connection's reader reads each
// frame as it arrives (its size checked against WithMaxMessageSize from the
// frame header, before the body is read), finds the method by name without
// allocating, and decodes the arguments into a pooled struct. Then:
//
//   - TTHeader requests, which Kitex-style clients pipeline and match by
//     sequence id, are served concurrently, each on a goroutine from the
//     server's handler pool; replies are written under the connection's
//     write lock, and the last of several writers, or the writer of the
//     16th reply since the last flush, flushes for all of them. At most
//     1024 requests of one connection, and 256 MiB of their messages (but
//     always one), are served at once; beyond that the connection's reader
//     serves requests itself and stops reading, which pushes back on the
//     client (a handler that waits for a later request of its own
//     connection may then wait for good). The
//     handler pool runs at most 10,000
//     handlers at once: a TTHeader request read while that many run waits,
//     in the order read, until one returns (so a handler that waits for a
//     later TTHeader request may wait for good once 10,000 do;
//     WithMaxInFlight rejects such requests at once instead). Connections
//     are read on goroutines of their own pool, one per connection with
//     input, so a server whose handlers all wait still reads its
//     connections, accepts new ones and answers what needs no handler
//     pool (rejections, Framed and Buffered requests).
//   - Framed and Buffered requests are served in order on the reader's
//     goroutine (Apache clients expect replies in order). The replies
//     queued for pipelined requests are flushed before the next handler
//     runs, so a reply never waits for a later request's handler; replies
//     that need no handler (rejections) are flushed together. A method
//     name of the form "Service:method" (Apache's TMultiplexedProtocol) is
//     routed to that service, and the reply carries the bare method name,
//     as those clients expect.
//
// The handler gets a context that carries the call's [rpcinfo.RPCInfo], the
// caller's [metainfo] values (TTHeader), and a deadline from the TTHeader RPC
// timeout. The context is canceled when the handler returns. Middleware
// (WithMiddleware) runs around the handler and sees the generated argument
// and result structs. They are pooled: once the reply is written they are
// cleared and reused, so a middleware must not use them after its
// endpoint returns (copy what you keep).
//
// # Errors on the wire
//
// An exception declared in the IDL goes back in the result struct. Any other
// error becomes a Thrift ApplicationException (EXCEPTION message):
// INTERNAL_ERROR with the error's text, or the handler's own
// *thrift.ApplicationException. A handler panic is recovered and answered
// with INTERNAL_ERROR carrying the panic value; so is a panic while encoding
// a reply (a result changed by another goroutine as it is written), whose
// partial reply is withdrawn first. An error that wraps
// context.DeadlineExceeded (a handler giving up at its context's deadline,
// which is the caller's) is answered with the text of a Petrel timeout, so
// that a Petrel caller reads it as a Timeout error. An
// [rpcerr.BizStatusError] goes back over TTHeader as a normal reply with the
// "biz-status", "biz-message" and "biz-extra" (JSON) string keys, as Kitex
// does; over Framed and Buffered, which have no header, as INTERNAL_ERROR. An error that is a nil pointer
// (a nil *rpcerr.Error returned as error) or whose Error method panics is
// answered with INTERNAL_ERROR saying so. An unknown method is answered
// with UNKNOWN_METHOD, undecodable arguments with PROTOCOL_ERROR. Oneway
// requests are never answered.
//
// Requests the server refuses on purpose are answered at once with
// INTERNAL_ERROR whose message is the text of an [rpcerr.Error], starting
// with "petrel: overloaded: " (WithMaxQPS, WithMaxInFlight) or "petrel: shutting_down: " (a
// request read while Stop drains); clients map it back with
// [rpcerr.CodeFromMessage].
//
// # Limits
//
// WithMaxConnections closes connections over the limit at once;
// WithMaxQPS rejects requests over a token bucket; WithMaxInFlight rejects
// requests while that many are being served (package limit applies all
// three); WithMaxMessageSize (16 MiB
// by default) closes a connection whose frame declares more. WithReadTimeout
// (5 s by default) closes a connection whose request, once begun, has not
// arrived whole within it: the rest of a request is waited for on a
// goroutine of the server's pool, which clients that stop halfway through
// a request would otherwise hold for good. It does not bound the wait
// between requests; WithIdleTimeout does that. WithWriteTimeout (5 s by
// default) closes a connection whose client leaves a batch of replies
// unread that long once the socket is full. Bad bytes close
// the connection; they never panic the server. A TTHeader request whose
// header is refused (an info block that cannot be decoded, such as an
// unknown info id; a transform; a header size that does not fit its frame)
// is first answered with a PROTOCOL_ERROR exception saying what was wrong;
// when its frame was consumed whole (its length and magic were good) the
// connection then goes on, otherwise the reply carries "crrst" and the
// connection closes. Requests read before them
// (or before a request that times out) are still answered: on a TTHeader
// connection the server reads no more and closes it once their replies
// are written. [Server.Stats] counts what was rejected.
//
// # Stopping
//
// [Server.Stop] drains: requests already read are served and answered,
// TTHeader replies carry the "crrst" key that tells pooling clients to drop
// the connection, requests read after Stop are rejected as shutting down
// (oneway requests, which have no reply to carry a rejection, are still
// served), and connections are closed once nothing is in flight and they
// are quiet.
// With [WithRegistry] the server registers its services once it serves and
// Stop deregisters them before it drains ([WithDeregisterGrace] keeps it
// serving normally a little longer, while clients move away).
package server
