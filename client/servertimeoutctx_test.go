package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestServerTimeoutWrapsContextDeadline: a call ended by its caller's
// context deadline (30 ms) against a Petrel server whose handler honours
// the deadline the client sent (petrelEcho returns at ctx.Done). The
// server gets the time left rounded down to whole milliseconds, so its
// handler's context ends first and its timeout exception usually arrives
// before the client's own timer fires: the call then failed with a Timeout
// that did not wrap context.DeadlineExceeded, which the same call gets
// when the client's timer wins (timeoutError), so errors.Is depended on a
// race.
func TestServerTimeoutWrapsContextDeadline(t *testing.T) {
	_, addr := startPetrel(t)
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, addr, s)
			checkCtxDeadline(t, c, 30*time.Millisecond, &echoArgs{SleepMs: 300}, "at the server")
		})
	}
}

// checkCtxDeadline makes 10 calls of args with a context deadline of
// timeout (earlier than any RPC timeout) and fails unless each error is a
// Timeout wrapping context.DeadlineExceeded, as timeoutError makes it when
// the deadline passes while the call waits for its reply; where says where
// the deadline is meant to pass.
func checkCtxDeadline(t *testing.T, c *client.Client, timeout time.Duration, args *echoArgs, where string) {
	t.Helper()
	bad := 0
	var last error
	const n = 10
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		_, err := echo(ctx, c, args)
		cancel()
		if rpcerr.CodeOf(err) != rpcerr.Timeout {
			t.Fatalf("got %v, want a timeout", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			bad++
			last = err
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d calls ended by their context's deadline %s do not wrap context.DeadlineExceeded; last: %v", bad, n, where, last)
	}
}
