package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestUnsentLastAttempt: the first attempt is sent and times out
// (retryable); the retry it brings is turned away before sending (a circuit
// breaker's rejection: Overloaded, not sent), which ends the call. With one
// attempt at a time as with backup requests, the retry gives its share of
// the budget back, as no server saw it, and the call's error is the sent
// attempt's: the request may have run, and a caller told it was never sent
// could send it again.
func TestUnsentLastAttempt(t *testing.T) {
	clk := newClock()
	budget := retry.BudgetConfig{Ratio: -1, MinRetries: 5, Now: clk.Now}
	var rejected error = notSent{rpcerr.Wrap(rpcerr.Overloaded, errors.New("open"), "rejected by a breaker")}
	for _, mode := range []string{"retry", "hedge"} {
		t.Run(mode, func(t *testing.T) {
			p := retry.Policy{MaxAttempts: 2, Idempotent: true, Backoff: noWait}
			var fork retry.Fork
			if mode == "hedge" {
				p.BackupDelay = time.Hour // backups only on failure here
				fork = forkFake
			}
			r := newRetryer(t, retry.Config{Default: p, Budget: budget})
			var n atomic.Int32
			ep := r.Middleware(fork)(func(ctx context.Context, req, resp any) error {
				if n.Add(1) == 1 {
					return errTimeout
				}
				return rejected
			})
			var out string
			err := ep(context.Background(), nil, &out)
			if n.Load() != 2 {
				t.Fatalf("%d attempts, want 2", n.Load())
			}
			if _, retries := r.Budget().Counts(); retries != 0 {
				t.Errorf("%d retries counted, want 0: the only retry was never sent", retries)
			}
			if retry.NotSent(err) || !errors.Is(err, errTimeout) {
				t.Errorf("error %v (not sent: %v); want the sent attempt's timeout", err, retry.NotSent(err))
			}
		})
	}
}
