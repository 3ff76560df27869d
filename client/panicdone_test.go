package client_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
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

// TestCodecPanicLeavesInstanceBreakerClosed: 08b07fc reported an attempt
// whose codec panics to the instance breaker as an Internal failure. A
// request codec that panics in FastWrite never sends anything, yet each
// such call counted as a failure of the (healthy) server instance: a
// client-side bug in one method opened the instance's breaker, and the next
// good call of any method was rejected. The report is marked abandoned now.
func TestCodecPanicLeavesInstanceBreakerClosed(t *testing.T) {
	srv := startServer(t)
	g, err := circuitbreak.NewGroup(circuitbreak.Config{OpenFor: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := setup{"long", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})}
	c := newClient(t, srv.Addr(), s, client.WithMiddleware(recoverMW), client.WithInstanceBreaker(g))
	ctx := context.Background()
	for range 25 { // more than DefaultMinSamples; nothing reaches the server
		c.Call(ctx, "echo", false, &panickyArgs{}, &echoResult{})
	}
	st := g.Get(srv.Addr()).State()
	_, err = echo(ctx, c, &echoArgs{Msg: []byte("ok")})
	if st != circuitbreak.Closed || errors.Is(err, circuitbreak.ErrOpen) {
		t.Fatalf("after 25 calls whose request codec panicked before sending, the healthy instance's breaker is %v and a good call gets: %v", st, err)
	}
}

// errLB picks its one address and keeps the errors given to Done.
type errLB struct {
	addr string
	mu   sync.Mutex
	errs []error
}

func (b *errLB) Update([]discovery.Instance) {}
func (b *errLB) Pick(context.Context, string) (discovery.Instance, error) {
	return discovery.Instance{Address: b.addr}, nil
}
func (b *errLB) Done(_ string, _ time.Duration, err error) {
	b.mu.Lock()
	b.errs = append(b.errs, err)
	b.mu.Unlock()
}

// TestGoexitReportedAsGoexit: 08b07fc's deferred report built its error
// from recover()'s value, which is nil for runtime.Goexit (a codec calling
// t.FailNow): the balancer was told the call "ended by a panic: <nil>",
// which did not happen.
func TestGoexitReportedAsGoexit(t *testing.T) {
	srv := startServer(t)
	lb := &errLB{addr: srv.Addr()}
	s := setup{"long", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})}
	c := newClient(t, srv.Addr(), s, client.WithLoadBalancer(lb))
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Call(context.Background(), "echo", false, &echoArgs{Msg: []byte("x")}, &goexitResult{})
	}()
	<-done
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if len(lb.errs) != 1 {
		t.Fatalf("%d Dones, want 1", len(lb.errs))
	}
	if msg := lb.errs[0].Error(); strings.Contains(msg, "panic: <nil>") {
		t.Fatalf("the attempt ended by runtime.Goexit was reported to the balancer as %q", msg)
	}
}
