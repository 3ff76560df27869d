package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/retry"
)

// TestOnewayRetriedOnlyWhenNotSent: a oneway call is retried only when its
// request was not sent, whatever its policy's Idempotent, and its policy's
// BackupDelay sends no backup request; a two-way call of the same method
// goes by the policy.
func TestOnewayRetriedOnlyWhenNotSent(t *testing.T) {
	type key struct{}
	isOneway := func(ctx context.Context) bool { return ctx.Value(key{}) != nil }
	cfg := retry.Config{
		Methods: map[string]retry.Policy{
			"get":   {MaxAttempts: 3, Idempotent: true, Backoff: noWait},
			"hedge": {MaxAttempts: 3, Idempotent: true, Backoff: noWait, BackupDelay: time.Microsecond},
		},
		Budget: retry.BudgetConfig{Ratio: 1, MinRetries: 100},
	}
	cases := []struct {
		name   string
		method string
		oneway bool
		err    error
		want   int32 // attempts
	}{
		{"oneway connection error", "get", true, errConn, 1},
		{"oneway timeout", "get", true, errTimeout, 1},
		{"oneway not sent", "get", true, notSent{errConn}, 3},
		{"oneway of the default policy, not sent", "other", true, notSent{errConn}, 2},
		{"two-way connection error", "get", false, errConn, 3},
		{"oneway with backup delay, connection error", "hedge", true, errConn, 1},
		{"oneway with backup delay, not sent", "hedge", true, notSent{errConn}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRetryer(t, cfg)
			var n, inflight, most atomic.Int32
			ep := r.MiddlewareOneway(forkFake, isOneway)(func(ctx context.Context, req, resp any) error {
				n.Add(1)
				if in := inflight.Add(1); in > most.Load() {
					most.Store(in)
				}
				defer inflight.Add(-1)
				time.Sleep(time.Millisecond) // longer than the backup delay
				return tc.err
			})
			ctx := withMethod(context.Background(), tc.method)
			if tc.oneway {
				ctx = context.WithValue(ctx, key{}, true)
			}
			err := ep(ctx, nil, new(string))
			if n.Load() != tc.want {
				t.Fatalf("attempts = %d, want %d (error %v)", n.Load(), tc.want, err)
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("error = %v, want %v", err, tc.err)
			}
			if tc.oneway && most.Load() > 1 {
				t.Fatalf("%d attempts of a oneway call ran at once", most.Load())
			}
		})
	}
}
