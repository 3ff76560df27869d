package client_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestMiddlewareDeadlineWithoutRPCTimeout: a call ended by a middleware's
// context's deadline says so and wraps context.DeadlineExceeded also when
// the call has no deadline of its own (WithRPCTimeout(0)). It did neither
// whenever the connection's (or the mux pool's) timer woke the caller
// before the context's timer marked the context done: on mux every time.
func TestMiddlewareDeadlineWithoutRPCTimeout(t *testing.T) {
	srv := startServer(t)
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
			defer cancel()
			return next(ctx, req, resp)
		}
	}
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, srv.Addr(), s, client.WithRPCTimeout(0), client.WithMiddleware(mw))
			bad := 0
			var last error
			const n = 20
			for range n {
				_, err := echo(context.Background(), c, &echoArgs{SleepMs: 200})
				if rpcerr.CodeOf(err) != rpcerr.Timeout {
					t.Fatalf("got %v, want a timeout", err)
				}
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "middleware") && !strings.Contains(err.Error(), "context") {
					bad++
					last = err
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d calls ended by a middleware's context deadline neither say so nor wrap context.DeadlineExceeded; last: %v", bad, n, last)
			}
		})
	}
}

// TestSpentBudgetNotSentEveryTransport: a negative WithCallTimeout ends the
// call at once with an rpcerr.Timeout error marked not sent (rpcerr.NotSent,
// which the retry policy reads), on every transport. Over Framed and
// Buffered on the long pool, with a connection idle there, the pool's
// check failed the call with an unmarked timeout.
func TestSpentBudgetNotSentEveryTransport(t *testing.T) {
	srv := startServer(t)
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, srv.Addr(), s)
			if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("warm")}); err != nil {
				t.Fatal(err) // leaves an idle connection in the long pool
			}
			_, err := echo(context.Background(), c, &echoArgs{Msg: []byte("x")}, client.WithCallTimeout(-1))
			if rpcerr.CodeOf(err) != rpcerr.Timeout {
				t.Fatalf("got %v, want a timeout", err)
			}
			if !rpcerr.NotSent(err) {
				t.Fatalf("a call whose time budget was spent before it began: %v; rpcerr.NotSent is false", err)
			}
		})
	}
}

// TestMuxFlushTimeoutIsTimeout: against a server that never reads, a call
// whose large request cannot leave before its deadline fails with an
// rpcerr.Timeout error (a net.Error with Timeout() true) on the multiplexed
// pool as on the long pool. The caller flushing its own request got the
// flush's deadline error wrapped as rpcerr.Connection.
func TestMuxFlushTimeoutIsTimeout(t *testing.T) {
	for _, name := range []string{"context deadline", "rpc timeout", "long pool (control)"} {
		t.Run(name, func(t *testing.T) {
			srv := startDeafServer(t)
			opts := []client.Option{client.WithHostPorts(srv.addr()), client.WithMuxConnection(1), client.WithRPCTimeout(0)}
			ctx := context.Background()
			switch name {
			case "context deadline":
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
			case "rpc timeout":
				opts = append(opts, client.WithRPCTimeout(300*time.Millisecond))
			default:
				opts = []client.Option{client.WithHostPorts(srv.addr()), client.WithRPCTimeout(300 * time.Millisecond)}
			}
			c, err := client.New("Echo", opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.Call(ctx, "echo", false, &echoArgs{Msg: make([]byte, 32<<20)}, new(echoResult))
			if rpcerr.CodeOf(err) != rpcerr.Timeout {
				t.Fatalf("a call whose request could not be written before its deadline: code %v, want Timeout: %v", rpcerr.CodeOf(err), err)
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("not a net.Error with Timeout(): %v", err)
			}
		})
	}
}
