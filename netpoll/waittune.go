//go:build linux || darwin || freebsd

package netpoll

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// An idle poller either blocks in epoll_wait or parks in the Go runtime's
// poller (sysPoller.park). Blocking costs one system call a wake-up, but the
// thread keeps its processor while it waits, and when no other processor is
// idle (GOMAXPROCS=1 above all) the scheduler's monitor takes it back from a
// wait that spans two of its ticks (20 µs apart while it is active) and
// starts another thread to poll the network: each such wait costs two or
// three thread switches and keeps the monitor at its fastest pace. Parking
// costs two more epoll_wait calls a wake-up and a pass through the
// scheduler, but gives the processor back at once.
//
// Which costs less depends on the load and on the host, and the length of
// the waits alone does not tell. A rule that parked once the mean wait was
// over 50 µs (and blocked again under 35 µs) had been tuned on one host; on
// the next, rpcbench's server at a paced 40k requests/s on 100 connections
// waited 47 µs on average, so it parked, at 11.9 µs of CPU a request, where
// blocking cost 9.5; and a lone connection's round trips (waits of some
// 80 µs) cost the server 35-41 µs of CPU a request parking and 42-47
// blocking. So the manager measures:
// every tuneEvery it runs its pollers the other way for tuneWindow and keeps
// that way if the process's CPU time a byte read was lower by tuneMargin than
// in the tuneWindow just before. A window with fewer than tuneMinReads reads
// decides nothing (the way stays as it was): at such loads the two cost
// about the same, a parked poller holds no processor, and the CPU a byte is
// mostly noise. Pollers start parked.
//
// Switching way costs too (the monitor's pace changes over a millisecond or
// so), so tuneSettle passes after each switch before the probe is measured,
// and a probe is made at most every tuneEvery: the dearer way runs 300 ms in
// every 5.3 s at most, which at 20% dearer adds about 1%. Each probe that
// finds the way in force cheaper by tuneMargin doubles the time to the next,
// up to tuneEvery<<tuneBackoff (40 s), so that a steady load spends little
// time the dearer way (a lone connection's p99 round trip is some 40% longer
// while the server blocks); a probe that changes the way brings tuneEvery
// back. A probe within tuneMargin either way decides nothing and is made
// again after tuneRetry, and so is a first probe that finds the way in force
// cheaper: the backoff grows only when the next probe confirms it. A 250 ms
// window is noisy, and the first after a switch the more so. Of eleven
// servers at 40k requests/s, whose probes found blocking 8-23% cheaper, one
// measured 4.5% at its first probe; of the next eleven, one measured
// blocking 5% dearer at its first probe, and with that probe final until the
// next it ran parked for 10 s at 11.9 µs a request instead of 10. Measuring
// from the first step, windows of the warm-up were compared: hence
// tuneStart.
//
// A busy poller (see spinBusy) never parks whatever the way, and a poller
// with dialed connections always parks when the process has no processor to
// spare for it (see poller.parkNext).
const (
	tuneStart    = time.Second
	tuneEvery    = 5 * time.Second
	tuneRetry    = time.Second
	tuneWindow   = 250 * time.Millisecond
	tuneSettle   = 50 * time.Millisecond
	tuneMargin   = 0.05
	tuneMinReads = 2000
	tuneBackoff  = 3
)

// waitTuner chooses whether the manager's idle pollers block or park (see
// tuneEvery). Pollers report their reads once a load window and call step.
type waitTuner struct {
	block atomic.Bool  // idle pollers block in the kernel (false: they park)
	due   atomic.Int64 // monoNanos of the next step with something to do
	bytes atomic.Int64 // read by the pollers so far
	reads atomic.Int64 // reads that returned data so far

	mu     sync.Mutex // guards the fields below; held by one stepping poller
	phase  tunePhase
	cpu0   time.Duration // at the start of the phase
	bytes0 int64
	reads0 int64
	before float64              // CPU a byte of the way in force before the probe
	kept   int                  // probes in a row that found the way in force cheaper (at most tuneBackoff)
	lost   bool                 // the last probe found the way in force cheaper, not yet confirmed
	cpu    func() time.Duration // process CPU time; nil: processCPU
}

type tunePhase int

const (
	tuneWarm    tunePhase = iota // before the first step
	tuneRun                      // running the chosen way until the next probe
	tuneMeasure                  // measuring the chosen way
	tuneSwitch                   // switched; waiting tuneSettle
	tuneProbe                    // measuring the other way
)

// add records a poller's reads since its last report.
func (t *waitTuner) add(bytes, reads int64) {
	if reads != 0 {
		t.bytes.Add(bytes)
		t.reads.Add(reads)
	}
}

// step moves the tuner on when its next phase is due. Whichever poller
// comes first steps it; the others return at once.
func (t *waitTuner) step(now time.Time) {
	mono := monoNanos(now)
	if mono < t.due.Load() || !t.mu.TryLock() {
		return
	}
	defer t.mu.Unlock()
	if mono < t.due.Load() {
		return // another poller has just stepped
	}
	cpu := processCPU
	if t.cpu != nil {
		cpu = t.cpu
	}
	c, b, r := cpu(), t.bytes.Load(), t.reads.Load()
	// Whether the phase ending now read enough to be measured, and its CPU
	// time a byte.
	measured := r-t.reads0 >= tuneMinReads && c > t.cpu0
	cost := float64(c-t.cpu0) / float64(b-t.bytes0)
	next := tuneWindow
	switch t.phase {
	case tuneWarm:
		// Let the process warm up before measuring.
		t.phase, next = tuneRun, tuneStart
	case tuneRun:
		t.phase = tuneMeasure
	case tuneMeasure:
		if !measured {
			t.phase, next = tuneRun, tuneEvery
			break
		}
		t.before = cost
		t.block.Store(!t.block.Load())
		t.phase, next = tuneSwitch, tuneSettle
	case tuneSwitch:
		t.phase = tuneProbe
	case tuneProbe:
		// The probe's way is kept only if it was cheaper by the margin.
		keep, retry := false, false
		switch {
		case !measured:
		case cost < t.before*(1-tuneMargin):
			keep, t.kept, t.lost = true, 0, false
		case cost > t.before*(1+tuneMargin) && t.lost:
			t.kept, t.lost = min(t.kept+1, tuneBackoff), false
		case cost > t.before*(1+tuneMargin):
			t.lost, retry = true, true // confirm it soon before backing off
		default: // within the margin: try again soon
			t.lost, retry = false, true
		}
		if !keep {
			t.block.Store(!t.block.Load())
		}
		t.phase, next = tuneRun, tuneEvery<<t.kept-tuneWindow
		if retry {
			next = tuneRetry - tuneWindow
		}
	}
	t.cpu0, t.bytes0, t.reads0 = c, b, r
	t.due.Store(mono + int64(next))
}

// monoEpoch is the origin of monoNanos.
var monoEpoch = time.Now()

// monoNanos returns the nanoseconds from monoEpoch to now on the monotonic
// clock (when now has a monotonic reading), so that a step of the wall
// clock does not stall the tuner.
func monoNanos(now time.Time) int64 { return int64(now.Sub(monoEpoch)) }

// processCPU returns the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
