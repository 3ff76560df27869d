package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// TestTimeoutErrorSaysWhichDeadline: a short or long pool's call that
// times out says so with its method, its server's address, and the
// deadline that ended it: its RPC timeout, or its context's deadline when
// that came first. Before, the error named no address, and a call ended
// after 20ms by its context's deadline said "(RPC timeout 5s)" about a
// third of the time (when the connection's read deadline woke the caller
// before the context's timer had marked it done).
func TestTimeoutErrorSaysWhichDeadline(t *testing.T) {
	pools := []setup{
		{"short", transport.TTHeader, client.WithShortConnection()},
		{"long", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})},
	}
	for _, s := range pools {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s, client.WithRPCTimeout(5*time.Second))
			check := func(err error, want string) {
				t.Helper()
				if rpcerr.CodeOf(err) != rpcerr.Timeout {
					t.Fatalf("got %v (code %v), want a timeout", err, rpcerr.CodeOf(err))
				}
				msg := err.Error()
				if !strings.Contains(msg, "echo") || !strings.Contains(msg, srv.Addr()) || !strings.Contains(msg, want) {
					t.Fatalf("timeout error %q: want one naming the method, the address %s and %q", msg, srv.Addr(), want)
				}
			}
			// The deadlines leave room for the pick and the dial on a loaded
			// machine: a deadline spent before a server is picked rightly
			// names no address.
			for range 15 {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				_, err := echo(ctx, c, &echoArgs{SleepMs: 400})
				cancel()
				check(err, "context")
				if strings.Contains(err.Error(), "RPC timeout") {
					t.Fatalf("a call ended by its context's deadline after 100ms says %q", err)
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("a call ended by its context's deadline: errors.Is(%q, context.DeadlineExceeded) is false", err)
				}
			}
			_, err := echo(context.Background(), c, &echoArgs{SleepMs: 400}, client.WithCallTimeout(100*time.Millisecond))
			check(err, "RPC timeout 100ms")
		})
	}
}
