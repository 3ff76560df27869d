package retry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/retry"
)

// TestNegativeRatioDisablesRetries: BudgetConfig.Ratio says a negative
// value disables retries; with MinRetries left at its default no retry is
// made. A MinRetries set explicitly still grants that many.
func TestNegativeRatioDisablesRetries(t *testing.T) {
	r := newRetryer(t, retry.Config{
		Default: retry.Policy{MaxAttempts: 3, Idempotent: true, Backoff: noWait},
		Budget:  retry.BudgetConfig{Ratio: -1},
	})
	var attempts int
	ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error { attempts++; return errConn })
	for range 5 {
		if err := ep(context.Background(), nil, nil); !errors.Is(err, errConn) {
			t.Fatalf("err %v, want errConn", err)
		}
	}
	if attempts != 5 {
		t.Fatalf("%d attempts for 5 calls with BudgetConfig.Ratio -1 (retries disabled), want 5", attempts)
	}
	b, err := retry.NewBudget(retry.BudgetConfig{Ratio: -1, MinRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if !b.Acquire() {
			t.Fatalf("retry %d refused; MinRetries is 2", i+1)
		}
	}
	if b.Acquire() {
		t.Fatal("a third retry granted with Ratio -1 and MinRetries 2")
	}
}
