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

// The poller parks once its waits are long, blocks again once they are
// short, keeps its choice while they are in between (a paced load must not
// switch back and forth), and a single long pause does not make a window of
// short waits look long.
func TestWaitMeterChoice(t *testing.T) {
	var w waitMeter
	// feed closes windows, each with the given waits.
	feed := func(windows int, waits ...time.Duration) {
		for range windows {
			for _, d := range waits {
				w.add(d)
			}
			w.closeWindow()
		}
	}
	us := time.Microsecond
	if w.park {
		t.Fatal("a new poller parks; it should block until its waits are known")
	}
	feed(1, 10*us, 10*time.Millisecond, 10*us, 10*us, 10*us, 10*us, 10*us, 10*us, 10*us, 10*us)
	if w.park {
		t.Fatalf("parks after one window of short waits and one 10 ms pause (average %v): the pause should count as %v", w.mean, waitClip)
	}
	feed(8, 80*us, 70*us, 90*us) // a lone busy connection
	if !w.park {
		t.Fatalf("blocks after 8 windows of waits of 70-90 µs (average %v)", w.mean)
	}
	feed(20, 42*us) // between blockBelow and parkAbove
	if !w.park {
		t.Fatalf("went back to blocking on waits of 42 µs (average %v), between %v and %v", w.mean, blockBelow, parkAbove)
	}
	feed(1) // a window without a wait changes nothing
	if !w.park {
		t.Fatal("an empty window changed the choice")
	}
	hold := int(parkDwell / loadWindow)
	feed(hold-30, 3*us, 5*us, 25*us, 40*us) // a paced load of 40k requests/s
	if !w.park {
		t.Fatalf("blocks %d windows after it chose to park: the choice should hold for %v", hold-30, parkDwell)
	}
	feed(30+8, 3*us, 5*us, 25*us, 40*us)
	if w.park {
		t.Fatalf("parks after %d windows of waits of 3-40 µs (average %v)", hold+8, w.mean)
	}
	feed(20, 42*us)
	if w.park {
		t.Fatalf("went back to parking on waits of 42 µs (average %v), between %v and %v", w.mean, blockBelow, parkAbove)
	}
}
