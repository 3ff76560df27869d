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
	if p.m.tune.block.Load() {
		t.Fatal("a new manager's pollers block; they should park until measured")
	}
	if p.parkNext() {
		t.Fatal("a busy poller parks: its waits should block in the kernel")
	}
	p.fewProcs = true
	p.dialed.Store(1)
	if !p.parkNext() {
		t.Fatal("a poller with dialed connections and no processor to spare does not park")
	}
}

// The wait tuner keeps the way that costs less CPU a byte read: it parks
// until measured, switches when the probe of the other way costs
// tuneMargin less, switches back otherwise, decides nothing on too few
// reads, backs off while probes find the way in force cheaper (each such
// finding confirmed by a second probe soon after), and probes again soon
// when they find the two within the margin.
func TestWaitTuner(t *testing.T) {
	var tu waitTuner
	now := time.Now()
	var cpu time.Duration
	tu.cpu = func() time.Duration { return cpu }
	untilDue := func() time.Duration { return time.Duration(tu.due.Load() - monoNanos(now)) }
	// run advances to the next due step with the given CPU a byte (in
	// nanoseconds) while blocking and while parking and the given reads a
	// second, and steps.
	run := func(blockCost, parkCost float64, readsPerSec int64) {
		t.Helper()
		d := untilDue()
		if tu.phase == tuneWarm {
			d = 0
		}
		reads := readsPerSec * int64(d) / int64(time.Second)
		bytes := reads * 1024
		cost := parkCost
		if tu.block.Load() {
			cost = blockCost
		}
		cpu += time.Duration(cost * float64(bytes))
		tu.add(bytes, reads)
		now = now.Add(d)
		tu.step(now)
	}
	// probe runs one probe (measure, switch, settle, probe) and returns
	// whether the poller blocks after it.
	probe := func(blockCost, parkCost float64, readsPerSec int64) bool {
		t.Helper()
		for i := range 4 {
			run(blockCost, parkCost, readsPerSec)
			if i == 0 && tu.phase != tuneMeasure {
				t.Fatalf("phase %d after the run, want measuring", tu.phase)
			}
		}
		if tu.phase != tuneRun {
			t.Fatalf("phase %d after a probe, want running", tu.phase)
		}
		return tu.block.Load()
	}

	run(9.5, 11.9, 40000) // the first step: warm-up
	if tu.block.Load() {
		t.Fatal("blocks before measuring")
	}
	if d := untilDue(); d != tuneStart {
		t.Fatalf("first measure in %v, want %v", d, tuneStart)
	}
	// 40k reads/s, blocking cheaper by 20%: the first probe switches.
	if block := probe(9.5, 11.9, 40000); !block {
		t.Fatal("parks after a probe found blocking 20% cheaper")
	}
	if d := untilDue(); d != tuneEvery-tuneWindow {
		t.Fatalf("next probe in %v after a switch, want %v", d, tuneEvery-tuneWindow)
	}
	// The probe of parking finds it dearer: back to blocking, and the next
	// probe waits twice as long, then four and eight times, and no longer.
	for i, want := range []int{2, 4, 8, 8} {
		// A first loss is confirmed after tuneRetry before the backoff
		// grows.
		if block := probe(9.5, 11.9, 40000); !block {
			t.Fatalf("probe %d: parks after an unconfirmed probe found parking 25%% dearer", i)
		}
		if d := untilDue(); d != tuneRetry-tuneWindow {
			t.Fatalf("probe %d: next probe in %v after a first loss, want %v", i, d, tuneRetry-tuneWindow)
		}
		block := probe(9.5, 11.9, 40000)
		if !block {
			t.Fatalf("probe %d: parks though parking costs 25%% more", i)
		}
		if d := untilDue(); d != tuneEvery*time.Duration(want)-tuneWindow {
			t.Fatalf("probe %d: next probe in %v, want %v", i, d, tuneEvery*time.Duration(want)-tuneWindow)
		}
	}
	// Costs within tuneMargin either way: the way holds, and the probe is
	// made again after tuneRetry, without changing the backoff.
	for _, park := range []float64{9.7, 10.3} {
		if block := probe(10, park, 40000); !block {
			t.Fatalf("parks after a probe found parking %.0f%% cheaper: within the margin", 100-park*10)
		}
		if d := untilDue(); d != tuneRetry-tuneWindow {
			t.Fatalf("next probe in %v after an inconclusive one, want %v", d, tuneRetry-tuneWindow)
		}
	}
	probe(9.5, 11.9, 40000) // a first loss, confirmed by the next
	if probe(9.5, 11.9, 40000); untilDue() != 8*tuneEvery-tuneWindow {
		t.Fatal("an inconclusive probe changed the backoff")
	}
	// A first loss, then a probe within the margin: the loss is forgotten,
	// and the next is a first loss again.
	probe(9.5, 11.9, 40000)
	probe(10, 10.3, 40000)
	if probe(9.5, 11.9, 40000); untilDue() != tuneRetry-tuneWindow {
		t.Fatal("a loss after an inconclusive probe backed off: it should be confirmed first")
	}
	// A lone connection's load, parking cheaper: switches, and the backoff
	// starts over.
	if block := probe(45, 38, 10000); block {
		t.Fatal("blocks after a probe found parking 15% cheaper")
	}
	if d := untilDue(); d != tuneEvery-tuneWindow {
		t.Fatalf("next probe in %v after a switch, want %v", d, tuneEvery-tuneWindow)
	}
	// The switch forgot the loss found before it: the next is a first one.
	if block := probe(45, 38, 10000); block || untilDue() != tuneRetry-tuneWindow {
		t.Fatalf("block %v, next probe in %v after a first loss since a switch; want parked, %v", block, untilDue(), tuneRetry-tuneWindow)
	}
	// Too few reads: nothing is measured and the way holds, whatever the
	// costs; the probe is skipped until the next period.
	run(1, 100, 1000)
	run(1, 100, 1000)
	if tu.phase != tuneRun || tu.block.Load() {
		t.Fatalf("phase %d, block %v after a window of too few reads; want running, parked", tu.phase, tu.block.Load())
	}
	// Reads enough while measuring but not while probing: back to the way
	// measured.
	run(1, 100, 40000)
	run(1, 100, 40000)
	run(1, 100, 40000)
	if !tu.block.Load() || tu.phase != tuneProbe {
		t.Fatalf("phase %d, block %v: want probing blocking", tu.phase, tu.block.Load())
	}
	run(1, 100, 100)
	if tu.block.Load() {
		t.Fatal("blocks after a probe with too few reads")
	}
	// A step before it is due does nothing.
	due := tu.due.Load()
	tu.step(now.Add(time.Millisecond))
	if tu.due.Load() != due || tu.phase != tuneRun {
		t.Fatal("a step before due changed the tuner")
	}
}
