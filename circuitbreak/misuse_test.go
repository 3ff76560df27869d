package circuitbreak_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
)

// TestProbeReportedTwiceCountsOnce: a half-open probe whose outcome is
// reported twice (Finish with the same ticket, or Done(true, ...) again)
// counts once: one successful probe does not close a breaker that needs
// two.
func TestProbeReportedTwiceCountsOnce(t *testing.T) {
	open := func(t *testing.T) (*circuitbreak.Breaker, *fakeClock) {
		clk := newClock()
		b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 1, OpenFor: 100 * time.Millisecond, HalfOpenSuccesses: 2})
		p, _ := b.Allow()
		b.Done(p, errConn)
		clk.Advance(100 * time.Millisecond)
		return b, clk
	}
	t.Run("Finish", func(t *testing.T) {
		b, _ := open(t)
		tk, err := b.Admit()
		if err != nil || !tk.Probe() {
			t.Fatalf("after OpenFor: probe %v, err %v", tk.Probe(), err)
		}
		b.Finish(tk, nil)
		b.Finish(tk, nil)
		if st := b.State(); st != circuitbreak.HalfOpen {
			t.Fatalf("one successful probe finished twice left the breaker %v, want half-open (HalfOpenSuccesses 2)", st)
		}
	})
	t.Run("Done", func(t *testing.T) {
		b, _ := open(t)
		probe, err := b.Allow()
		if err != nil || !probe {
			t.Fatalf("after OpenFor: probe %v, err %v", probe, err)
		}
		b.Done(true, nil)
		b.Done(true, nil)
		if st := b.State(); st != circuitbreak.HalfOpen {
			t.Fatalf("one successful probe done twice left the breaker %v, want half-open (HalfOpenSuccesses 2)", st)
		}
	})
}
