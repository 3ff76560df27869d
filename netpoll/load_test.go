//go:build linux || darwin || freebsd

package netpoll

import (
	"testing"
	"time"
)

// The spin gate opens only after a sustained busy share of at least spinBusy,
// not for one busy window, and closes again when the load falls.
func TestLoadMeterGate(t *testing.T) {
	var m loadMeter
	now := time.Unix(0, 0)
	m.start = now
	// feed runs windows of 1 ms, each with the given idle time in 10 slices.
	feed := func(windows int, idle time.Duration) {
		for range windows {
			for range 10 {
				now = now.Add(loadWindow / 10)
				m.addIdle(idle/10, now)
			}
		}
	}
	feed(1, 20*time.Microsecond) // one window 98% busy
	if m.busy() {
		t.Fatalf("busy after one busy window (share %.2f): a burst must not start spinning", m.share)
	}
	feed(40, 50*time.Microsecond) // 95% busy, sustained
	if !m.busy() {
		t.Fatalf("not busy after 40 windows 95%% busy (share %.2f)", m.share)
	}
	feed(40, 300*time.Microsecond) // 70% busy: a paced load
	if m.busy() {
		t.Fatalf("still busy after 40 windows 70%% busy (share %.2f): paced loads must not spin", m.share)
	}
}

func TestSpinWaits(t *testing.T) {
	start := time.Now()
	end, spun := spin(50 * time.Microsecond)
	if d := end.Sub(start); d < 50*time.Microsecond || spun < 50*time.Microsecond || spun > d {
		t.Fatalf("spin(50µs) returned after %v, reporting %v", d, spun)
	}
}
