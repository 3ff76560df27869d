package circuitbreak_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestCanceledCallsAreNeutral: a call canceled by its caller (a backup
// request's losing attempt, a user giving up) got no answer: as
// DefaultCounts says, it is neither a failure nor a success, so it does
// not dilute the error rate nor count toward MinSamples.
func TestCanceledCallsAreNeutral(t *testing.T) {
	clk := newClock()
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 10})
	canceled := rpcerr.Wrap(rpcerr.Canceled, context.Canceled, "caller gave up")
	for i := range 30 {
		tk, err := b.Admit()
		if err != nil {
			t.Fatalf("canceled call %d rejected: %v", i, err)
		}
		b.Finish(tk, canceled)
	}
	for i := range 9 {
		tk, err := b.Admit()
		if err != nil {
			t.Fatalf("failing call %d rejected: %v", i, err)
		}
		b.Finish(tk, errConn)
		if st := b.State(); st != circuitbreak.Closed {
			t.Fatalf("state %v after %d failures and 30 canceled calls; MinSamples is 10", st, i+1)
		}
	}
	tk, err := b.Admit()
	if err != nil {
		t.Fatal(err)
	}
	b.Finish(tk, errConn)
	if st := b.State(); st != circuitbreak.Open {
		t.Fatalf("state %v after 10 failures (every answered call failed) and 30 canceled calls, want open: the canceled calls counted as successes", st)
	}
}
