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

// TestReplyOverMaxMessageSizeNamesTheOption: a reply over the client's
// WithMaxMessageSize fails its call with a Protocol error that gives the
// reply's size and the limit and says the limit is the client's
// WithMaxMessageSize (not the server's), on every pool; the connection is
// not reused. On a multiplexed connection, a call in flight with it fails
// at once rather than at its timeout.
func TestReplyOverMaxMessageSizeNamesTheOption(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			if strings.HasPrefix(s.name, "mux") {
				s.pool = client.WithMuxConnection(1) // the slow call below shares the connection
			}
			c := newClient(t, srv.Addr(), s, client.WithMaxMessageSize(1024), client.WithRPCTimeout(10*time.Second))
			var slow chan error
			if strings.HasPrefix(s.name, "mux") {
				slow = make(chan error, 1)
				go func() {
					_, err := echo(context.Background(), c, &echoArgs{SleepMs: 2500})
					slow <- err
				}()
				waitFor(t, "the slow call to reach the server", func() bool { return srv.requests.Load() == 1 })
			}
			_, err := echo(context.Background(), c, &echoArgs{Mode: modeHuge, Size: 1 << 20})
			if rpcerr.CodeOf(err) != rpcerr.Protocol || !errors.Is(err, transport.ErrFrameTooLarge) {
				t.Fatalf("a reply of 1 MiB over a limit of 1024: %v (code %v), want a Protocol error of ErrFrameTooLarge", err, rpcerr.CodeOf(err))
			}
			for _, w := range []string{"echo", srv.Addr(), "limit 1024", "WithMaxMessageSize", "104"} {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
			if slow != nil {
				limit := time.NewTimer(1500 * time.Millisecond)
				defer limit.Stop()
				select {
				case err := <-slow:
					if rpcerr.CodeOf(err) != rpcerr.Protocol {
						t.Fatalf("the call in flight on the connection: %v (code %v), want a Protocol error", err, rpcerr.CodeOf(err))
					}
				case <-limit.C:
					t.Fatal("the call in flight on the multiplexed connection that read a reply over the limit still waited after 1.5s")
				}
			}
			if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("after")}); err != nil {
				t.Fatalf("the call after: %v", err)
			}
			if want := int32(2); !strings.HasPrefix(s.name, "short") && srv.accepted.Load() != want {
				t.Fatalf("%d connections accepted, want %d: the connection that read the oversized reply was reused", srv.accepted.Load(), want)
			}
		})
	}
}
