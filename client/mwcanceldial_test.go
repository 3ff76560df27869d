//go:build linux

package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// TestMiddlewareCancelEndsDial: a middleware that runs next under a
// context of its own and cancels it ends a dial of the short and long
// pools (the call's own, shared with no one), as it ends a wait for the
// reply. The dial ran under the caller's context, on to the connect
// timeout.
func TestMiddlewareCancelEndsDial(t *testing.T) {
	addr := blackhole(t)
	cancelAfter := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			time.AfterFunc(50*time.Millisecond, cancel)
			return next(ctx, req, resp)
		}
	}
	for _, s := range setups() {
		if s.proto != transport.TTHeader || s.name[:3] == "mux" {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, addr, s, client.WithConnectTimeout(2*time.Second), client.WithRPCTimeout(0),
				client.WithMiddleware(cancelAfter))
			start := time.Now()
			_, err := echo(context.Background(), c, &echoArgs{})
			if d := time.Since(start); d > time.Second || rpcerr.CodeOf(err) != rpcerr.Canceled {
				t.Errorf("a dial whose attempt's context was canceled after 50ms ended after %v: code %v: %v",
					d.Round(time.Millisecond), rpcerr.CodeOf(err), err)
			}
		})
	}
}
