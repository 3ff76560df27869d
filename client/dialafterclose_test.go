package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestNoDialAfterClose: an attempt that reaches the pool after Close
// returned (held by a middleware, a retry's next attempt) fails with the
// client-closed error without connecting. The short and long pools
// checked only after the connect, so the server saw a connection after
// Close.
func TestNoDialAfterClose(t *testing.T) {
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startSilentServer(t)
			closed := make(chan struct{})
			entered := make(chan struct{})
			hold := func(next endpoint.Endpoint) endpoint.Endpoint {
				return func(ctx context.Context, req, resp any) error {
					close(entered)
					<-closed // the client is closed meanwhile
					return next(ctx, req, resp)
				}
			}
			c := newClient(t, srv.addr(), s, client.WithRPCTimeout(0), client.WithMiddleware(hold))
			done := make(chan error, 1)
			go func() {
				_, err := echo(context.Background(), c, &echoArgs{})
				done <- err
			}()
			<-entered
			c.Close()
			close(closed)
			err := <-done
			if rpcerr.CodeOf(err) != rpcerr.Connection || !strings.Contains(err.Error(), "client is closed") {
				t.Errorf("attempt after Close: %v, want the client-closed error", err)
			}
			time.Sleep(50 * time.Millisecond) // let the server's accept loop count
			if n := srv.accepted.Load(); n != 0 {
				t.Errorf("the server accepted %d connection(s) dialed after Close returned, want 0", n)
			}
		})
	}
}
