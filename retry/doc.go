// Package retry retries failed RPC calls within a budget, and sends backup
// requests.
//
// A [Retryer] holds a [Policy] per method and one [Budget]; its middleware
// ([Retryer.Middleware]) goes around the endpoint that makes one attempt of
// a call. Clients install it with client.WithRetry.
//
// # What is retried
//
// A failed attempt is sent again when all of these hold:
//   - the failure is not final ([rpcerr.Final]: the client was closed);
//   - the idempotency rule: the method is marked Idempotent, or the request
//     provably did not reach the server ([NotSent]: the client found no
//     address, could not dial, or could not encode the request), or the
//     server refused it before its handler ran (rpcerr.Overloaded,
//     rpcerr.ShuttingDown);
//   - the policy's predicate (by default [DefaultRetryOn]: rpcerr codes
//     Connection, Timeout, ShuttingDown; never business statuses or
//     declared exceptions);
//   - attempts remain (Policy.MaxAttempts) and so does time before the
//     call's deadline;
//   - the budget has room.
//
// A call of a oneway method gets no reply, so an attempt that failed once
// its write began may have reached the server: it is retried only when its
// request provably was not sent, whatever Idempotent says, and sends no
// backup requests ([Retryer.MiddlewareOneway]).
//
// Between attempts the middleware waits an exponential backoff with jitter
// ([Backoff]).
//
// # Budget and marker
//
// The [Budget] grants retries only while they stay under a share (10% by
// default) of the original requests over a sliding window, so that when a
// service fails every call, the attempts sent are at most 1.1 per call
// instead of MaxAttempts (plus MinRetries, 3 by default, per window, so
// that a client with little traffic can still retry).
//
// A retried attempt carries the transient metainfo key [MarkerKey]. A
// Petrel server hands it to the handler's context; a client called with
// that context sees it ([IsRetry]), makes one attempt only, and counts it
// against its own budget as a retry. While such calls come (within one
// budget window of the last), the client makes no retries of its own:
// retries happen at the outermost hop that retries. A retry at one hop is
// therefore never multiplied by retries at the next, and over two hops the
// attempts reaching the second server stay within the first hop's ratio.
//
// # Backup requests
//
// A policy with BackupDelay (idempotent methods only) sends another attempt
// when the previous has not answered within the delay; the first reply wins
// and the other attempts are canceled. An attempt that fails with a
// retryable error is followed after its backoff, or the next backup's
// delay if that is sooner (at once after a refusal by a server that is
// shutting down). Backup attempts run concurrently and
// need a [Fork] from the client, which gives each its own call state and
// result value. Backups come out of the same budget as retries. A retry or
// backup whose request was never sent ([NotSent]: a breaker rejected it, no
// connection could be made) gives its share of the budget back, and an
// attempt refused by a server that is shutting down (rpcerr.ShuttingDown)
// is replaced without taking any: the client sends such a request to
// another instance whatever the policy, and with backup requests it leaves
// that to this middleware. A call whose last attempt was never sent, after
// one that was, returns the sent attempt's error: that request may have
// run.
package retry
