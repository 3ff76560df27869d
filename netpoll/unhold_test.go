//go:build linux

package netpoll_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestUnholdWithoutHold: a stray Unhold is ignored: a connection the peer
// then closes still closes (it used to stay open for good, its hold count
// negative), and a later Hold still holds.
func TestUnholdWithoutHold(t *testing.T) {
	_, addr := serve(t, netpoll.Config{
		OnRequest: func(ctx context.Context, c netpoll.Connection) error {
			c.Unhold()
			c.Unhold()
			return echo(ctx, c)
		},
	})
	got, err := halfCloseExchange(t, addr, "hello")
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v; want %q and the close", got, err, "hello")
	}
}
