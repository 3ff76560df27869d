// Package circuitbreak stops calling a failing service or instance for a
// while, then probes it before letting traffic back.
//
// A [Breaker] counts call outcomes over a sliding window (Config.Window, in
// Config.Buckets slices). Closed, it lets every call through; once the
// window holds at least MinSamples calls and the share of failures reaches
// ErrorRate, it opens and rejects calls at once (an rpcerr.Overloaded error
// wrapping [ErrOpen]) for OpenFor. Then it is half-open: one probe call at a
// time goes through; HalfOpenSuccesses successful probes in a row close it,
// a failed one opens it again. While a service stays down the probes are
// one per OpenFor plus the time a probe takes to fail (a probe holds its
// slot for up to ProbeTimeout).
//
// Which errors count is [Config.Counts]; by default ([DefaultCounts])
// every error except business statuses and IDL-declared exceptions, which
// are answers of a healthy service, and the caller's own doing: its
// cancellations, requests the client could not encode and calls ended by
// the client's Close. Those last got no answer and count neither way.
//
// A [Group] keeps one breaker per key. [Group.Middleware] is the
// service-level breaker (a breaker per method of the callee service) with
// an optional [Fallback]; clients install it with client.WithCircuitBreaker,
// and the instance-level breaker (a breaker per address, consulted when the
// client picks an instance) with client.WithInstanceBreaker.
package circuitbreak
