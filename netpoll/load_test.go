//go:build linux || darwin || freebsd

package netpoll

import (
	"runtime"
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
	end, idle := spin(50 * time.Microsecond)
	if d := end.Sub(start); d < 50*time.Microsecond || idle > d {
		t.Fatalf("spin(50µs) returned after %v, reporting %v idle", d, idle)
	}
}

// The goroutines that run while the poller spins are work, not idle time: a
// spinning server whose handlers keep the processor busy must not look idle,
// or it stops spinning and starts again from window to window.
func TestSpinCountsOthersAsBusy(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// A handler's slice of work: 20 µs on the processor.
			for t0 := time.Now(); time.Since(t0) < 20*time.Microsecond; {
			}
			runtime.Gosched()
		}
	}()
	start := time.Now()
	end, idle := spin(2 * time.Millisecond)
	close(stop)
	<-done
	if d := end.Sub(start); idle > d/4 {
		t.Fatalf("spin(2ms) beside a goroutine busy all the while reported %v of %v idle; want at most a quarter", idle, d)
	}
}

// A poller whose idle periods are short is busy, whatever share its meter
// reads: each wake-up's cost counts as idle. Idle periods of a paced load
// are not short, and a poller busy so does not park.
func TestBusyByIdlePeriods(t *testing.T) {
	p := &poller{m: &manager{}}
	now := time.Unix(0, 0)
	p.load.start = now
	// feed runs windows of 1 ms, each with the given idle time in the given
	// number of idle periods.
	feed := func(windows, periods int, idle time.Duration) {
		for range windows {
			for range periods {
				now = now.Add(loadWindow / time.Duration(periods))
				p.addIdle(idle/time.Duration(periods), now)
			}
		}
	}
	if p.busy() {
		t.Fatal("a new poller is busy")
	}
	// A paced load of 80k requests/s: 58% busy, idle periods of 12 µs.
	feed(40, 35, 420*time.Microsecond)
	if p.busy() {
		t.Fatalf("busy after 40 windows of 35 idle periods of 12 µs (share %.2f, mean idle period %v): paced loads must not spin", p.load.share, p.waits.mean)
	}
	// A saturated server waiting 100 times a millisecond for 3 µs at a time,
	// with a share that reads 70%.
	feed(40, 100, 300*time.Microsecond)
	if !p.busy() {
		t.Fatalf("not busy after 40 windows of 100 idle periods of 3 µs (share %.2f, mean idle period %v)", p.load.share, p.waits.mean)
	}
	p.waits.park = true
	if p.parkNext() {
		t.Fatal("a busy poller parks: its waits should block in the kernel")
	}
	p.fewProcs = true
	p.dialed.Store(1)
	if !p.parkNext() {
		t.Fatal("a poller with dialed connections and no processor to spare does not park")
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
	feed(1, waitClip, waitClip) // one window of long waits
	if w.park {
		t.Fatalf("parks after one window of long waits (average %v): one window must not outweigh the others", w.mean)
	}
	for i := 0; !w.park; i++ { // a lone busy connection
		if i == 40 {
			t.Fatalf("blocks after 40 windows of waits of 70-90 µs (average %v)", w.mean)
		}
		feed(1, 80*us, 70*us, 90*us)
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
