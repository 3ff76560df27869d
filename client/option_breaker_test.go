package client_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// TestInstanceBreaker: of two instances one refuses connections; once its
// breaker opens, calls go to the other only.
func TestInstanceBreaker(t *testing.T) {
	var calls atomic.Int32
	live := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		calls.Add(1)
		r.Success, r.HasSuccess = a.Msg, true
		return nil
	})
	dead := deadAddr(t)
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 5, OpenFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := newGovClient(t, client.WithHostPorts(dead, live), client.WithInstanceBreaker(g))
	failed := 0
	for i := range 100 {
		err := c.Call(context.Background(), "put", false, &echoArgs{}, new(echoResult))
		if err != nil {
			failed++
			if rpcerr.CodeOf(err) != rpcerr.Connection || i > 20 {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	}
	if st := g.Lookup(dead).State(); st != circuitbreak.Open || failed != 5 {
		t.Fatalf("dead instance's breaker %v after %d failures, want open after 5", st, failed)
	}
	if st := g.Lookup(live).State(); st != circuitbreak.Closed || calls.Load() != 95 {
		t.Fatalf("live instance: breaker %v, %d calls", st, calls.Load())
	}
	// Every instance open: the call fails at once.
	g.Get(live).Done(false, rpcerr.New(rpcerr.Connection, "x")) // not enough to open it
	c2 := newGovClient(t, client.WithHostPorts(dead), client.WithInstanceBreaker(g))
	err = c2.Call(context.Background(), "put", false, &echoArgs{}, new(echoResult))
	if !errors.Is(err, circuitbreak.ErrOpen) || rpcerr.CodeOf(err) != rpcerr.Overloaded {
		t.Fatalf("every instance open: %v", err)
	}
}

// TestServiceBreakerWithFallback: a service failing every call trips the
// method's breaker; later calls get the fallback's answer without reaching
// the server.
func TestServiceBreakerWithFallback(t *testing.T) {
	var calls atomic.Int32
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		calls.Add(1)
		return errInjected
	})
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 10, OpenFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	fallback := func(ctx context.Context, req, resp any, err error) error {
		if errors.Is(err, circuitbreak.ErrOpen) {
			r := resp.(*echoResult)
			r.Success, r.HasSuccess = []byte("fallback"), true
			return nil
		}
		return err
	}
	c := newGovClient(t, client.WithHostPorts(addr), client.WithCircuitBreaker(g, fallback))
	for i := range 50 {
		res := new(echoResult)
		err := c.Call(context.Background(), "get", false, &echoArgs{}, res)
		if i < 10 && rpcerr.CodeOf(err) != rpcerr.Timeout {
			t.Fatalf("call %d: %v", i, err)
		}
		if i >= 10 && (err != nil || string(res.Success) != "fallback") {
			t.Fatalf("call %d: %v %q, want the fallback", i, err, res.Success)
		}
	}
	if n := calls.Load(); n != 10 {
		t.Fatalf("server reached %d times, want 10", n)
	}
}

// BenchmarkCallGoverned is BenchmarkCall's long/TTHeader case with the retry
// middleware (a policy for "echo", no failures) and the service- and
// instance-level breakers: what governance adds to a call that succeeds.
func BenchmarkCallGoverned(b *testing.B) {
	addr := startServerProcess(b, "test")
	services, _ := circuitbreak.NewGroup(circuitbreak.Config{})
	instances, _ := circuitbreak.NewGroup(circuitbreak.Config{})
	r := newRetryer(b, retry.Config{Methods: map[string]retry.Policy{"echo": {MaxAttempts: 2, Idempotent: true}}})
	for _, gov := range []struct {
		name string
		opts []client.Option
	}{
		{"none", nil},
		{"retry+breakers", []client.Option{client.WithRetry(r), client.WithCircuitBreaker(services, nil), client.WithInstanceBreaker(instances)}},
	} {
		b.Run(gov.name, func(b *testing.B) {
			c := newClient(b, addr, setup{"long/ttheader", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})}, gov.opts...)
			args := &echoArgs{Msg: []byte("hello, petrel")}
			res := &echoResult{Success: make([]byte, 0, 64)}
			ctx := context.Background()
			for range 100 {
				if err := c.Call(ctx, "echo", false, args, res); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := c.Call(ctx, "echo", false, args, res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
