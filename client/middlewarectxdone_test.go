package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
)

// TestMiddlewareContextDoneAtCallDeadline: a middleware bounds its own
// work (an auth lookup, say) with context.WithTimeout(ctx, 300ms) on the
// context it is given. That context reports the call's deadline (the RPC
// timeout's, 100 ms away) from Deadline, so context.WithDeadline sees the
// parent's earlier deadline and returns a mere WithCancel(parent): the
// derived context is done only when its parent is. The call's context must
// therefore be done at the deadline it reports, or the middleware's bound
// is lost (it was done neither at 100 ms nor at 300 ms), and its Err must
// not stay nil once its Deadline has passed (the context contract).
func TestMiddlewareContextDoneAtCallDeadline(t *testing.T) {
	srv := startServer(t)
	var waited time.Duration
	var derivedErr, callErr error
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			guard := time.NewTimer(time.Second)
			defer guard.Stop()
			select { // work that honours its context
			case <-wctx.Done():
			case <-guard.C:
			}
			waited = time.Since(start)
			derivedErr, callErr = wctx.Err(), ctx.Err()
			return next(ctx, req, resp)
		}
	}
	c := newClient(t, srv.Addr(), setups()[0], client.WithRPCTimeout(100*time.Millisecond), client.WithMiddleware(mw))
	echo(context.Background(), c, &echoArgs{})
	if waited >= time.Second {
		t.Fatalf("the middleware's context.WithTimeout(ctx, 300ms) was not done after %v (its Err %v; the call's context, whose Deadline had passed, has Err %v)",
			waited.Round(time.Millisecond), derivedErr, callErr)
	}
	if !errors.Is(derivedErr, context.DeadlineExceeded) || !errors.Is(callErr, context.DeadlineExceeded) {
		t.Fatalf("after the call's deadline: derived context's Err %v, call context's Err %v; want context.DeadlineExceeded", derivedErr, callErr)
	}
}
