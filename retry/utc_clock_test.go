package retry_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/internal/steppedclock"
	"github.com/petrel-rpc/petrel/retry"
)

// TestBudgetUTCClockStepsBack: a BudgetConfig.Now of time.Now().UTC() has
// no monotonic reading (UTC strips it), so a wall clock set back moves the
// budget's time back. The budget must still hold its ratio and yield to
// an upstream hop for one window after a Debit: not grant every retry, nor
// refuse all of them until the clock catches up, nor forget Debits made
// after the step.
func TestBudgetUTCClockStepsBack(t *testing.T) {
	clk := steppedclock.New(t)
	utc := func() time.Time { return clk.Now().UTC() }
	b, err := retry.NewBudget(retry.BudgetConfig{Ratio: 0.1, Window: time.Second, Buckets: 10, MinRetries: -1, Now: utc})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		b.Request()
	}
	clk.Advance(10 * time.Millisecond)
	clk.StepBack(time.Hour)
	for range 100 {
		b.Request()
	}
	granted := 0
	for range 50 {
		if b.Acquire() {
			granted++
		}
	}
	if granted != 10 {
		t.Errorf("100 requests after the UTC clock went back 1h: %d retries granted, want 10 (ratio 0.1)", granted)
	}
	// Debit, then the clock goes back again: the budget yields to the
	// upstream for one window, not for the hour the clock lost.
	b.Debit()
	clk.StepBack(time.Hour)
	clk.Advance(1100 * time.Millisecond)
	for range 100 {
		b.Request()
	}
	if !b.Acquire() {
		t.Fatal("no retry granted a window after the last Debit, once the UTC clock went back 1h")
	}
	// A Debit made after the step still makes it yield.
	b.Debit()
	if b.Acquire() {
		t.Fatal("a retry granted just after a Debit, made after the UTC clock went back 1h")
	}
}
