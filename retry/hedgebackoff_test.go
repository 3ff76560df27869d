package retry_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestBackupRequestsKeepBackoff: with a backup-request policy as without
// one, the attempt after a retryable failure (here a connection refused at
// once) waits Policy.Backoff (200 ms, no jitter) when no backup is due
// sooner. Backup requests once relaunched at once, ignoring it.
func TestBackupRequestsKeepBackoff(t *testing.T) {
	for _, backup := range []time.Duration{0, time.Second} {
		r, err := retry.New(retry.Config{
			Default: retry.Policy{MaxAttempts: 2, Idempotent: true, BackupDelay: backup,
				Backoff: retry.Backoff{Base: 200 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: -1}},
			Budget: retry.BudgetConfig{Ratio: 1, MinRetries: 100},
		})
		if err != nil {
			t.Fatal(err)
		}
		fork := func(ctx context.Context, resp any) (context.Context, any, <-chan struct{}, context.CancelFunc, func(bool)) {
			actx, cancel := context.WithCancel(ctx)
			return actx, new(string), nil, cancel, func(bool) { cancel() }
		}
		var mu sync.Mutex
		var times []time.Time
		ep := r.Middleware(fork)(func(ctx context.Context, req, resp any) error {
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
			return rpcerr.New(rpcerr.Connection, "connection refused")
		})
		var out string
		_ = ep(context.Background(), nil, &out)
		mu.Lock()
		if len(times) != 2 {
			t.Fatalf("BackupDelay %v: %d attempts, want 2", backup, len(times))
		}
		if gap := times[1].Sub(times[0]); gap < 150*time.Millisecond {
			t.Errorf("BackupDelay %v: the retry after a failure came %v after it; Backoff says 200ms", backup, gap)
		}
		mu.Unlock()
	}
}

// TestBackupRetryWithoutBudgetEnds: when the attempt that waited out its
// backoff after a failure finds no budget, and no other attempt is in
// flight, the call ends with the failure rather than waiting for its
// context.
func TestBackupRetryWithoutBudgetEnds(t *testing.T) {
	r, err := retry.New(retry.Config{
		Default: retry.Policy{MaxAttempts: 3, Idempotent: true, BackupDelay: time.Hour,
			Backoff: retry.Backoff{Base: 10 * time.Millisecond, Max: 10 * time.Millisecond, Jitter: -1}},
		Budget: retry.BudgetConfig{Ratio: 0.0001, MinRetries: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	fork := func(ctx context.Context, resp any) (context.Context, any, <-chan struct{}, context.CancelFunc, func(bool)) {
		actx, cancel := context.WithCancel(ctx)
		return actx, new(string), nil, cancel, func(bool) { cancel() }
	}
	refused := rpcerr.New(rpcerr.Connection, "connection refused")
	ep := r.Middleware(fork)(func(ctx context.Context, req, resp any) error { return refused })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	var out string
	if err := ep(ctx, nil, &out); !errors.Is(err, refused) {
		t.Fatalf("got %v, want the attempt's failure", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("the call returned after %v, by its context; want right after the backoff", el)
	}
}

// TestBackupDeniedThenFailureEnds: a backup-request call whose backup timer
// fired while the budget had no room (no backup sent), and whose only
// attempt then fails with a retryable error, ends with that error after
// the failure's backoff. The backoff once compared its end with the time
// the timer had already fired, armed nothing, and the call, with nothing
// in flight, waited for its context: for ever without a deadline.
func TestBackupDeniedThenFailureEnds(t *testing.T) {
	r, err := retry.New(retry.Config{
		Default: retry.Policy{MaxAttempts: 3, Idempotent: true, BackupDelay: 20 * time.Millisecond,
			Backoff: retry.Backoff{Base: 50 * time.Millisecond, Max: 50 * time.Millisecond, Jitter: -1}},
		Budget: retry.BudgetConfig{Ratio: 0.0001, MinRetries: -1}, // no room for any retry or backup
	})
	if err != nil {
		t.Fatal(err)
	}
	fork := func(ctx context.Context, resp any) (context.Context, any, <-chan struct{}, context.CancelFunc, func(bool)) {
		actx, cancel := context.WithCancel(ctx)
		return actx, new(string), nil, cancel, func(bool) { cancel() }
	}
	refused := rpcerr.New(rpcerr.Connection, "connection refused")
	ep := r.Middleware(fork)(func(ctx context.Context, req, resp any) error {
		// The attempt fails after the backup delay (20ms) has passed.
		tm := time.NewTimer(60 * time.Millisecond)
		defer tm.Stop()
		<-tm.C
		return refused
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	var out string
	err = ep(ctx, nil, &out)
	el := time.Since(start)
	if el > time.Second || !errors.Is(err, refused) {
		t.Fatalf("the call returned after %v with %v; want the attempt's failure right after it (60ms)", el, err)
	}
}
