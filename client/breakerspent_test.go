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
)

// TestServiceBreakerIgnoresSpentCalls: calls whose time
// was spent before they started (an expired context, or WithCallTimeout
// with a negative duration) never leave the client: the healthy server is
// never reached. The service-level breaker must not count them as the
// service's failures, open, and then reject callers whose contexts are
// live.
func TestServiceBreakerIgnoresSpentCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(c *client.Client) error
	}{
		{"expired-ctx", func(c *client.Client) error {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			return c.Call(ctx, "get", false, &echoArgs{}, new(echoResult))
		}},
		{"spent-call-timeout", func(c *client.Client) error {
			return c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult), client.WithCallTimeout(-1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
				calls.Add(1)
				r.Success, r.HasSuccess = a.Msg, true
				return nil
			})
			g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 5, OpenFor: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			c := newGovClient(t, client.WithHostPorts(addr), client.WithCircuitBreaker(g, nil))
			if err := c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult)); err != nil {
				t.Fatal(err)
			}
			var last error
			for range 5 {
				last = tc.call(c)
			}
			t.Logf("spent call's error: %v (NotSent %v)", last, retry.NotSent(last))
			err = c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult))
			t.Logf("breaker %v, server reached %d times; live call: %v", g.Get("get").State(), calls.Load(), err)
			if errors.Is(err, circuitbreak.ErrOpen) {
				t.Fatalf("a live call to a healthy server is rejected: the breaker opened on calls that never left the client")
			}
		})
	}
}
