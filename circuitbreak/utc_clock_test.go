package circuitbreak_test

import (
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/internal/steppedclock"
)

// TestUTCClockStepsBack: a Config.Now of time.Now().UTC() has no
// monotonic reading (UTC strips it), so setting the wall clock back moves
// the breaker's time back. The failures that follow must still be counted
// and open the breaker, not land in buckets of the abandoned later time
// that the window does not see until the clock catches up.
func TestUTCClockStepsBack(t *testing.T) {
	clk := steppedclock.New(t)
	utc := func() time.Time { return clk.Now().UTC() }
	b := newBreaker(t, circuitbreak.Config{Now: utc, MinSamples: 10})
	for range 5 {
		b.Done(false, nil)
	}
	clk.Advance(10 * time.Millisecond)
	clk.StepBack(time.Hour)
	for i := range 20 {
		probe, err := b.Allow()
		if err != nil {
			if i >= 5 && errors.Is(err, circuitbreak.ErrOpen) {
				return
			}
			t.Fatalf("call %d: %v", i, err)
		}
		b.Done(probe, errConn)
	}
	t.Fatalf("with a UTC clock set back 1h, 5 successes and 20 failures left the breaker %v, want open", b.State())
}

// TestUTCClockStepsBackWhileOpen: with a Config.Now without a monotonic
// reading, a wall clock set back while the breaker is open must not keep
// it open (rejecting every call) until the clock catches up: OpenFor
// counts from the first call after the step at the latest. Likewise a
// probe whose outcome never came stops blocking the next probe
// ProbeTimeout after the first call after the step.
func TestUTCClockStepsBackWhileOpen(t *testing.T) {
	clk := steppedclock.New(t)
	utc := func() time.Time { return clk.Now().UTC() }
	openFor := 100 * time.Millisecond
	b := newBreaker(t, circuitbreak.Config{Now: utc, MinSamples: 1, OpenFor: openFor, ProbeTimeout: openFor})
	b.Done(false, errConn)
	if s := b.State(); s != circuitbreak.Open {
		t.Fatalf("state %v after a failure with MinSamples 1, want open", s)
	}
	clk.StepBack(time.Hour)
	_, _ = b.Allow() // a call during the open time, after the step: rejected
	clk.Advance(openFor + time.Millisecond)
	probe, err := b.Allow()
	if err != nil || !probe {
		t.Fatalf("OpenFor (%v) after the UTC clock went back 1h: Allow = %v, %v; want a probe", openFor, probe, err)
	}
	// The probe's outcome never comes; the clock goes back again.
	clk.StepBack(time.Hour)
	_, _ = b.Allow() // rejected: the probe is out
	clk.Advance(openFor + time.Millisecond)
	if probe, err := b.Allow(); err != nil || !probe {
		t.Fatalf("OpenFor after a lost probe and the UTC clock going back 1h: Allow = %v, %v; want a new probe", probe, err)
	}
}
