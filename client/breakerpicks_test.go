package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// TestInstanceBreakerAskedOncePerCall: with WithInstanceBreaker, a call
// whose instance's breaker is open picks again (up to 3 picks); when the
// balancer can only give the same address back (a single instance, or a
// consistent-hash key), the same breaker was asked 3 times and counted the
// one call as 3 rejected calls (Stats.Rejected, exported by
// contrib/metrics as petrel_breaker_calls_total{outcome="rejected"}).
func TestInstanceBreakerAskedOncePerCall(t *testing.T) {
	addr := deadAddr(t) // every dial is refused (counted)
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 1, OpenFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, addr, setup{"long/ttheader", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})},
		client.WithInstanceBreaker(g))
	echo(context.Background(), c, &echoArgs{Msg: []byte("x")}) // refused: opens the breaker
	b := g.Lookup(addr)
	if b == nil || b.State() != circuitbreak.Open {
		t.Fatalf("breaker of %s not open after a refused dial", addr)
	}
	before := b.Stats().Rejected
	_, err = echo(context.Background(), c, &echoArgs{Msg: []byte("y")})
	if !errors.Is(err, circuitbreak.ErrOpen) {
		t.Fatalf("err = %v, want ErrOpen", err)
	}
	if n := b.Stats().Rejected - before; n != 1 {
		t.Errorf("one call rejected, but the breaker of %s counted %d rejected calls", addr, n)
	}
}
