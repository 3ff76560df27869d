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
