//go:build linux || darwin || freebsd

package netpoll

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// fdOperator is what a poller knows of a registered fd: its pointer is the
// user data of the fd's kernel registration.
type fdOperator struct {
	fd     int
	poller *poller
	conn   *connection // set for connections
	ln     *listener   // set for listeners

	// refs counts the users of fd: 1 while the operator is open, plus one for
	// each system call in progress. The fd is closed when it drops to 0.
	refs      atomic.Int32
	closeFD   bool // the fd belongs to the operator and is closed with it
	want      int  // interest registered in the kernel; guarded by wantMu
	wantMu    sync.Mutex
	prev, nxt *fdOperator // registry links; guarded by poller.mu
}

// acquire takes a reference for a system call; it fails once the operator is
// closed.
func (op *fdOperator) acquire() bool {
	for {
		r := op.refs.Load()
		if r <= 0 {
			return false
		}
		if op.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// release drops a reference; the last one hands the fd back to its poller to
// be closed after the current batch of events (at once if the poller failed).
func (op *fdOperator) release() {
	if op.refs.Add(-1) == 0 {
		op.poller.retire(op)
	}
}

// setInterest changes what the kernel reports for the fd.
func (op *fdOperator) setInterest(want int) error {
	return op.changeInterest(want, 0)
}

// changeInterest sets the interest bits in add and keeps only those in keep.
func (op *fdOperator) changeInterest(add, keep int) error {
	op.wantMu.Lock()
	defer op.wantMu.Unlock()
	return op.changeInterestLocked(add, keep)
}

// changeInterestLocked is changeInterest with op.wantMu held.
func (op *fdOperator) changeInterestLocked(add, keep int) error {
	if op.want == detached || op.refs.Load() <= 0 {
		return ErrConnClosed
	}
	want := (op.want & keep) | add
	if want == op.want {
		return nil
	}
	op.want = want
	return op.poller.sys.mod(op.fd, op, want)
}

// dialed reports whether op is a connection made by a Dialer.
func (op *fdOperator) dialed() bool { return op.conn != nil && !op.conn.handlerDriven() }

// detach stops the fd's events for good (the fd stays open until retired).
func (op *fdOperator) detach() {
	op.wantMu.Lock()
	defer op.wantMu.Unlock()
	if op.want != detached {
		if op.poller != nil { // nil: never registered
			op.poller.sys.del(op.fd)
		}
		op.want = detached
	}
}

// detached is the interest of an operator removed from the kernel for good.
const detached = -1

// addInterest and dropInterest change one interest bit.
func (op *fdOperator) addInterest(bit int) error { return op.changeInterest(bit, ^0) }

func (op *fdOperator) dropInterest(bit int) error { return op.changeInterest(0, ^bit) }

// poller runs one event loop over one epoll or kqueue instance.
type poller struct {
	sys *sysPoller
	m   *manager
	id  int

	mu       sync.Mutex    // guards the fields below
	registry fdOperator    // sentinel of the list of registered operators
	count    int           // registered operators
	dialed   atomic.Int32  // registered operators of dialed connections; read without the lock
	retired  []*fdOperator // closed operators, freed after the next batch
	nretired atomic.Int32  // len(retired), read without the lock
	stopped  bool          // no fd left, or failed (failAll): register starts another

	// Poller goroutine only.
	waits     waitMeter
	reads     int64 // reads that returned data since the last window
	readBytes int64 // their bytes
	fewProcs  bool  // GOMAXPROCS <= pollers: with dialed connections, always park (see parkNext)
	load      loadMeter
	iov       [][]byte
	scratch   []*fdOperator
}

// Pollers.

const eventBatch = 256

// busyBatch is the batch size from which the poller expects more events at
// once and polls with timeout 0 before blocking.
const busyBatch = 4

// waitMeter keeps the mean of a poller's idle periods (see spinGap).
// Poller goroutine only.
type waitMeter struct {
	n     int           // waits in the current window
	sum   time.Duration // their lengths, each at most waitClip
	mean  time.Duration // moving average of the windows' mean wait
	known bool          // mean has a window folded in
}

// waitClip bounds each wait counted, so that one long pause does not
// outweigh a window's worth of short waits; each window weighs 1/16 in the
// average, so that one window of long waits (a stalled peer, a descheduled
// host) does not lift it much.
const waitClip = 200 * time.Microsecond

// add records a wait of d.
func (w *waitMeter) add(d time.Duration) {
	w.n++
	w.sum += min(d, waitClip)
}

// closeWindow folds the window's waits into the average.
func (w *waitMeter) closeWindow() {
	if w.n == 0 {
		return
	}
	if m := w.sum / time.Duration(w.n); w.known {
		w.mean += (m - w.mean) / 16
	} else {
		w.mean, w.known = m, true
	}
	w.n, w.sum = 0, 0
}

// A poller that is busy nearly all the time gains nothing from sleeping in
// the kernel between batches: the next event comes within microseconds, and
// each wake-up costs a system call and a context switch while the batches
// stay small (a few events each). A busy poller, after a batch smaller than
// spinBatch, spins for spinFor (yielding to runnable goroutines) and then
// polls with timeout 0, collecting what arrived meanwhile in one system
// call. An idle poller never spins, so light or paced loads pay no CPU for
// it and a lone connection's round trip is not delayed.
//
// A poller is busy when it is busy at least spinBusy of its time, or when
// its idle periods (waits and spins) average less than spinGap. The second
// test catches a saturated poller that does not spin yet: each of its many
// short waits in epoll_wait counts as idle in full, though the wake-up that
// ends it costs a few microseconds of the processor. An echo server at
// 100-110k requests/s, using 0.91 of its processor by /proc, measured 0.65
// busy, stayed below spinBusy and made 2.4-2.8 system calls a request,
// waiting some 70,000 times a second for 4 µs each. A paced load of 80k
// requests/s measured 0.56-0.58 busy, with idle periods of 9-18 µs.
const (
	spinBusy   = 0.75
	spinGap    = 6 * time.Microsecond
	spinBatch  = 16
	spinFor    = 30 * time.Microsecond
	loadWindow = time.Millisecond // how often the busy share is updated
)

// loadMeter measures the share of time a poller is busy (not blocked in a
// wait and not spinning idle), as a moving average over windows of
// loadWindow so that a burst of a few milliseconds does not start spinning.
// Poller goroutine only.
type loadMeter struct {
	start time.Time     // of the current window
	idle  time.Duration // idle time in the current window
	share float64       // moving average of the busy share of past windows
}

// busy reports whether the poller has been busy at least spinBusy of its
// time.
func (m *loadMeter) busy() bool { return m.share >= spinBusy }

// addIdle records an idle period ending at now, closes the window when it
// is over and reports whether it did.
func (m *loadMeter) addIdle(idle time.Duration, now time.Time) bool {
	m.idle += idle
	el := now.Sub(m.start)
	if el < loadWindow {
		return false
	}
	m.share += (float64(el-m.idle)/float64(el) - m.share) / 8
	m.start, m.idle = now, 0
	return true
}

// spin waits for d without a system call, letting other goroutines run. It
// returns when it ended and how much of the time was idle: the yields that
// came back within yieldIdle, having found nothing else to run. The
// goroutines that ran meanwhile (handlers sending their replies) were work:
// counting their time as idle made a saturated server look less busy each
// time it spun, so that it spun, stopped and spun again, and its batches and
// system calls per request swung from run to run.
func spin(d time.Duration) (end time.Time, idle time.Duration) {
	start := time.Now()
	last := start
	for {
		runtime.Gosched()
		now := time.Now()
		if y := now.Sub(last); y < yieldIdle {
			idle += y
		}
		last = now
		if now.Sub(start) >= d {
			return now, idle
		}
	}
}

// yieldIdle is the longest a yield takes when no other goroutine runs.
const yieldIdle = 2 * time.Microsecond

var defaultManager = &manager{}

// manager owns the pollers. They start with the first registration and stop
// when their last fd is gone, so an idle process runs no poller goroutines.
type manager struct {
	mu       sync.Mutex
	n        int // configured number of pollers (0: default)
	pollers  []*poller
	npollers atomic.Int32 // len(pollers), read without the lock
	next     atomic.Uint32
	tune     waitTuner // how idle pollers wait
}

// maxPollers bounds SetNumPollers: each poller is a goroutine with an epoll
// or kqueue instance of its own, and the default is one per 20 processors.
const maxPollers = 1024

// SetNumPollers sets how many pollers share the process's connections
// (default: one per 20 processors, at least one; at most 1024). It applies to
// fds registered after the call, raising the number or lowering it; running
// pollers keep their fds (one a lower number leaves out serves them until
// they close, and then stops).
func SetNumPollers(n int) error {
	if n < 1 || n > maxPollers {
		return fmt.Errorf("netpoll: SetNumPollers(%d): need 1 to %d", n, maxPollers)
	}
	defaultManager.mu.Lock()
	defaultManager.n = n
	defaultManager.mu.Unlock()
	return nil
}

// NumPollers returns the number of pollers connections are spread across.
func NumPollers() int {
	defaultManager.mu.Lock()
	defer defaultManager.mu.Unlock()
	return defaultManager.size()
}

func (m *manager) size() int {
	if m.n > 0 {
		return m.n
	}
	return max(1, runtime.GOMAXPROCS(0)/20)
}

// register adds op to the next poller (round robin) with the given interest,
// or returns ErrConnClosed if op was detached first: an accepted connection
// that OnPrepare gave to a goroutine may be closed by it at any time, and
// its Close, finding no poller, only marks it detached. Holding op.wantMu
// throughout, register comes either wholly before such a Close, which then
// takes the fd out and releases it, or wholly after, and refuses; the fd
// is then the caller's to close.
func (m *manager) register(op *fdOperator, want int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	op.wantMu.Lock()
	defer op.wantMu.Unlock()
	if op.want == detached {
		return ErrConnClosed
	}
	if size := m.size(); len(m.pollers) != size {
		if len(m.pollers) < size {
			m.pollers = append(m.pollers, make([]*poller, size-len(m.pollers))...)
		} else {
			// Fewer: the pollers cut off keep their fds, and stop with
			// the last, but get no new ones.
			clear(m.pollers[size:])
			m.pollers = m.pollers[:size]
		}
		m.npollers.Store(int32(len(m.pollers)))
	}
	i := roundRobin(m.next.Add(1), len(m.pollers))
	p := m.pollers[i]
	if p == nil || p.isStopped() {
		np, err := m.start(i)
		if err != nil {
			return err
		}
		p = np
		m.pollers[i] = p
	}
	op.poller = p
	op.want = want
	op.refs.Store(1)
	p.mu.Lock()
	p.link(op)
	p.mu.Unlock()
	if err := p.sys.add(op.fd, op, want); err != nil {
		p.mu.Lock()
		p.unlink(op)
		p.mu.Unlock()
		op.refs.Store(0)
		return err
	}
	return nil
}

// roundRobin returns the index of the poller for the registration counted
// next, of n. The modulo is unsigned: int(next) is negative on a 32-bit
// platform once the count passes 2^31.
func roundRobin(next uint32, n int) int { return int(next % uint32(n)) }

func (m *manager) start(id int) (*poller, error) {
	sys, err := newSysPoller(eventBatch)
	if err != nil {
		return nil, err
	}
	p := &poller{sys: sys, m: m, id: id, iov: make([][]byte, 0, 2)}
	p.load.start = time.Now()
	p.checkProcs()
	p.registry.prev, p.registry.nxt = &p.registry, &p.registry
	go p.run()
	return p, nil
}

func (p *poller) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// link and unlink add op to the registry and remove it, and count it.
func (p *poller) link(op *fdOperator) {
	op.prev, op.nxt = p.registry.prev, &p.registry
	p.registry.prev.nxt = op
	p.registry.prev = op
	p.count++
	if op.dialed() {
		p.dialed.Add(1)
	}
}

func (p *poller) unlink(op *fdOperator) {
	op.prev.nxt = op.nxt
	op.nxt.prev = op.prev
	op.prev, op.nxt = nil, nil
	p.count--
	if op.dialed() {
		p.dialed.Add(-1)
	}
}

// retire queues a closed operator: the poller deletes it from the kernel now
// and frees it (closing its fd) once no batch can still hold its pointer. A
// poller that failed (failAll) runs no batch any more and has no goroutine
// to free it: its fd is closed at once.
func (p *poller) retire(op *fdOperator) {
	op.detach()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		// Failed: one stopped for want of fds has none left to retire.
		p.closeOp(op)
		return
	}
	p.retired = append(p.retired, op)
	p.nretired.Store(int32(len(p.retired)))
	// Woken under mu: once mu is released the poller may free op, stop
	// and close wakefd, whose number the kernel may give to another file
	// before a wake made after the unlock.
	p.sys.wake()
}

// run is the poller's loop.
func (p *poller) run() {
	block := true
	var freeing []*fdOperator
	ended := false
	defer func() {
		if ended {
			return
		}
		// A callback run on this goroutine (OnPrepare) called
		// runtime.Goexit, which nothing can stop: go on in another
		// goroutine. The retired operators taken for freeing are put back;
		// the events of the batch not dispatched come again (epoll is
		// level-triggered).
		if len(freeing) > 0 {
			p.mu.Lock()
			p.retired = append(p.retired, freeing...)
			p.nretired.Store(int32(len(p.retired)))
			p.mu.Unlock()
		}
		p.scratch = nil
		go p.run()
	}()
	for {
		// Operators retired before this wait cannot appear in any batch after
		// it has been processed.
		freeing = p.scratch[:0]
		if p.nretired.Load() != 0 {
			p.mu.Lock()
			freeing = append(freeing, p.retired...)
			p.retired = p.retired[:0]
			p.nretired.Store(0)
			p.mu.Unlock()
			// Free them right after this poll: do not sleep on them.
			block = false
		}

		var n int
		var err error
		if block {
			// Blocked in the kernel's epoll_wait or parked in the Go
			// runtime's poller (see parkNext).
			start := time.Now()
			n, err = p.sys.wait(true, p.parkNext())
			now := time.Now()
			p.addIdle(now.Sub(start), now)
		} else {
			n, err = p.sys.wait(false, false)
		}
		if err == nil && n > 0 {
			p.dispatch(n)
			// Let the handlers just started run (and send their replies)
			// before polling again. After a large batch more events are
			// likely pending by then: poll with timeout 0, which skips the
			// scheduler's system-call bookkeeping. After a small one an
			// empty poll is likely: go straight to the blocking wait, which
			// returns at once if events did arrive, and save a system call.
			runtime.Gosched()
			block = n < busyBatch
			if n < spinBatch && p.busy() {
				end, idle := spin(spinFor)
				p.addIdle(idle, end)
				block = false
			}
		} else {
			// Nothing pending: sleep in the kernel.
			block = true
		}
		if len(freeing) > 0 {
			if p.free(freeing) {
				ended = true
				return
			}
		}
		p.scratch = freeing[:0]
		freeing = nil
		if err != nil {
			// epoll_wait only fails on a bad fd or bad memory: the poller is
			// unusable. Fail every fd it holds.
			ended = true
			p.failAll(err)
			return
		}
	}
}

// addIdle records an idle period (a wait or a spin) in the meters and, once
// a window, reports the window's reads to the manager's wait tuner, steps
// it, and checks whether the process has a processor to spare for a blocked
// poller.
func (p *poller) addIdle(idle time.Duration, now time.Time) {
	p.waits.add(idle)
	if p.load.addIdle(idle, now) {
		p.waits.closeWindow()
		p.m.tune.add(p.readBytes, p.reads)
		p.readBytes, p.reads = 0, 0
		p.m.tune.step(now)
		p.checkProcs()
	}
}

// parkNext reports whether the next idle wait parks in the Go runtime's
// poller rather than blocking in the kernel: as the manager's wait tuner
// chose (see tuneEvery), except in two cases.
//
// A busy poller (see spinBusy) never parks: its waits are the gaps between
// a saturated peer's bursts, and each park costs three or four epoll_wait
// calls (ours before and after, the runtime's to find nothing to run and to
// sleep) against one. Parking so, a saturated echo server made 0.2-0.3
// epoll_wait calls a request instead of 0.05-0.1.
//
// A poller holding dialed connections always parks when the process has
// no processor to spare for it (GOMAXPROCS at most the number of pollers,
// GOMAXPROCS=1 above all): a thread blocked in epoll_wait keeps its
// processor until the scheduler's monitor takes it back, which can be 10 ms
// later, and meanwhile nothing else runs: no timer fires and the Go
// runtime's own poller is not polled. A paced client at GOMAXPROCS=1 started
// its calls 1.6 ms late at the median and 18 ms at p99 that way. A client's
// callers are woken by what the poller does not see (timers, requests from
// elsewhere); a server's handlers are started by the poller itself.
func (p *poller) parkNext() bool {
	return (!p.m.tune.block.Load() && !p.busy()) || (p.fewProcs && p.dialed.Load() > 0)
}

// busy reports whether the poller is busy enough to spin (see spinBusy).
func (p *poller) busy() bool {
	return p.load.busy() || (p.waits.known && p.waits.mean < spinGap)
}

func (p *poller) checkProcs() {
	p.fewProcs = runtime.GOMAXPROCS(0) <= int(p.m.npollers.Load())
}

func (p *poller) dispatch(n int) {
	for i := 0; i < n; i++ {
		op, ev := p.sys.event(i)
		if op == nil {
			p.sys.drainWake()
			continue
		}
		// This atomic load pairs with the store in register (and the later
		// acquire and release): it makes the operator's fields, written
		// before the fd reached the kernel, visible to this goroutine in the
		// memory model's terms, which cannot see through the system call.
		if op.refs.Load() <= 0 {
			continue // closed: a stale event
		}
		switch {
		case op.conn != nil:
			op.conn.onEvent(p, ev)
		case op.ln != nil:
			op.ln.onEvent(ev)
		}
	}
}

// free closes the fds of retired operators, forgets them, and reports whether
// the poller stopped because it has no fd left.
func (p *poller) free(ops []*fdOperator) bool {
	p.m.mu.Lock()
	defer p.m.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, op := range ops {
		p.closeOp(op)
		ops[i] = nil
	}
	if p.count == 0 && len(p.retired) == 0 {
		p.stopped = true
		p.sys.close()
		return true
	}
	return false
}

// closeOp closes a retired operator's fd (if it owns it) and forgets the
// operator. The caller holds p.mu.
func (p *poller) closeOp(op *fdOperator) {
	if op.closeFD {
		closeFD(op.fd)
	}
	p.unlink(op)
}

// failAll closes every fd of a poller whose wait failed, on its goroutine,
// which then ends. Once stopped is set, retire closes the fds of operators
// released later (a system call was in progress) itself.
func (p *poller) failAll(err error) {
	p.m.mu.Lock()
	p.mu.Lock()
	p.stopped = true
	var ops []*fdOperator
	for op := p.registry.nxt; op != &p.registry; op = op.nxt {
		ops = append(ops, op)
	}
	p.mu.Unlock()
	p.m.mu.Unlock()
	failed := fmt.Errorf("netpoll: poller failed: %w", err)
	for _, op := range ops {
		switch {
		case op.conn != nil:
			op.conn.closeWith(failed)
		case op.ln != nil:
			op.ln.fail(failed) // Serve returns it
		}
	}
	// Those retired before the poller stopped, which no batch will free.
	p.mu.Lock()
	for _, op := range p.retired {
		p.closeOp(op)
	}
	p.retired = nil
	p.nretired.Store(0)
	p.mu.Unlock()
	p.sys.close() // retire no longer wakes it
}
