package client_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/transport"
)

// countingLB picks its one address and counts Picks and Dones.
type countingLB struct {
	addr         string
	picks, dones atomic.Int64
}

func (b *countingLB) Update([]discovery.Instance) {}
func (b *countingLB) Pick(context.Context, string) (discovery.Instance, error) {
	b.picks.Add(1)
	return discovery.Instance{Address: b.addr}, nil
}
func (b *countingLB) Done(string, time.Duration, error) { b.dones.Add(1) }

// TestCodecPanicStillReportsDone: loadbalance.Feedback says the
// caller of Pick calls Done exactly once per successful Pick. A call whose
// (hand-written) codec panics, a case the client handles (the connection
// is closed, the panic reaches the caller: TestCodecPanicClosesPooledConnection),
// skipped attempt's fb.Done (and instanceDone): P2C's in-flight count of the
// address then stayed up for good (P2C avoided it; since c0320b7 a departed
// address with calls in flight was kept in p2cState.gone for ever).
func TestCodecPanicStillReportsDone(t *testing.T) {
	for _, s := range []setup{
		{"short", transport.TTHeader, client.WithShortConnection()},
		{"long", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})},
		{"mux", transport.TTHeader, client.WithMuxConnection(1)},
	} {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			lb := &countingLB{addr: srv.Addr()}
			c := newClient(t, srv.Addr(), s, client.WithMiddleware(recoverMW), client.WithLoadBalancer(lb))
			ctx := context.Background()
			c.Call(ctx, "echo", false, &panickyArgs{}, &echoResult{})
			c.Call(ctx, "echo", false, &echoArgs{}, &panickyResult{})
			if p, d := lb.picks.Load(), lb.dones.Load(); p != d {
				t.Errorf("%d Picks, %d Dones: a call whose codec panicked never reported its end to the balancer", p, d)
			}
		})
	}
}
