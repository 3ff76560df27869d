// Package gopool runs short tasks on a bounded set of reused goroutines.
//
// A [Pool] keeps at most [Config].MaxWorkers worker goroutines. [Pool.Go] hands a
// task to an idle worker when there is one, starts a new worker when fewer than
// MaxWorkers exist, and otherwise appends the task to a FIFO queue that the next
// free worker drains. While a worker it woke has not yet started, Pool.Go
// queues instead: a burst of tasks (one poll's requests) wakes one worker, and
// that worker, as it starts, hands the queue's oldest task to a second, so a
// task that blocks holds up the queue only until the next worker runs. Where
// processors are few, one worker then runs the burst without a goroutine
// switch per task. A worker that has had nothing to do for [Config].IdleTimeout
// (at most twice that) exits, so an idle pool holds no goroutines for long. A task that panics does not
// kill the process: the worker recovers, reports the panic to
// [Config].PanicHandler and keeps serving.
//
// The network layer (netpoll) runs every connection's OnRequest handler through a
// Pool, so [Pool.Go] is built to cost little: one uncontended mutex section and,
// when a worker is idle, one send on that worker's wake channel; no allocation in
// steady state.
//
// # Queue bound
//
// The queue is not bounded by count: a Pool never blocks the caller and never
// drops a task. Callers bound themselves; netpoll submits at most one task per
// active connection, so its queue never holds more entries than it has
// connections. Queue storage is a ring that grows by doubling and is kept for
// reuse.
//
// # Closing
//
// [Pool.Shutdown] and [Pool.Close] stop the pool: queued tasks still run, running
// tasks finish, and every worker exits; both wait for that. After Close,
// [Pool.Submit] returns [ErrClosed], while [Pool.Go] and [Pool.CtxGo] (which have no
// error to return) run the task on a goroutine of its own, outside the bound and
// not waited for by Shutdown, with the same panic recovery, so no task is lost.
//
// # The default pool
//
// The package-level [Go] and [CtxGo] use a default pool made from
// [DefaultConfig]; it is never closed and drops panics. Its idle workers exit
// after IdleTimeout (10 s by default), longer than go.uber.org/goleak waits, so a
// test that uses the default pool and checks for leaked goroutines should ignore
// them with goleak.IgnoreTopFunction([WorkerTopFunction]).
//
// # Cost
//
// Pool.Go does not allocate in steady state. Its cost is one short mutex section
// plus, when it wakes an idle worker, one channel send and one goroutine
// switch; tasks submitted while that worker is on its way are queued for it,
// and a worker that finds the queue non-empty takes the next task without
// parking. Figures from go test -bench . -benchmem -cpu 1,2 on a shared 2-core
// linux/amd64 machine (they vary by up to 2x between runs); each submitter
// sends pre-built funcs in batches of 16 and waits for each batch, all at 0
// allocs/op:
//
//	                                 GOMAXPROCS=1   GOMAXPROCS=2
//	Pool.Go                          55-87 ns/op    47-72 ns/op
//	Pool.Go, 2 workers               83-86 ns/op    52-71 ns/op
//	go f()                           150-240 ns/op  125-170 ns/op
//	channel pool (256 workers)       187-220 ns/op  235 ns/op
//	Pool.Go, task using 32 KiB stack 0.8 us/op       0.8 us/op
//	go f(), task using 32 KiB stack  6.6 us/op       3.8 us/op
//
// A lone task that needs a worker woken (batches of 1: 320 ns/op) costs about
// as much as a fresh goroutine (a park and a ready versus a create and an
// exit); the pool wins by 2-4 times on bursts, and by several times when
// tasks grow their stacks, as request handlers do, because a worker keeps its
// grown stack.
package gopool

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// Default values that [DefaultConfig] uses and [New] puts in zero fields.
const (
	// DefaultMaxWorkers is the default bound on worker goroutines.
	DefaultMaxWorkers = 10000
	// DefaultIdleTimeout is how long a worker waits for work before exiting.
	DefaultIdleTimeout = 10 * time.Second
	// MinIdleTimeout is the shortest IdleTimeout [Config.Validate] accepts:
	// the idle timer ticks every IdleTimeout while any worker lives, busy
	// ones included, taking the pool's lock each time.
	MinIdleTimeout = time.Millisecond
)

// WorkerTopFunction is the function an idle worker goroutine is blocked in, as
// go.uber.org/goleak names it. Tests that use the default pool can pass it to
// goleak.IgnoreTopFunction; it matches idle workers of every Pool, so close your
// own pools before checking.
const WorkerTopFunction = "github.com/petrel-rpc/petrel/gopool.(*worker).run"

// ErrClosed is returned by [Pool.Submit] after the pool was closed.
var ErrClosed = errors.New("gopool: pool is closed")

// ErrNilFunc is returned by [Pool.Submit] when the task is nil.
var ErrNilFunc = errors.New("gopool: nil task")

// ConfigError reports a Config field with a value that cannot be used.
type ConfigError struct {
	Field  string // the field's name, e.g. "MaxWorkers"
	Value  any    // the value given
	Reason string // why it cannot be used
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("gopool: invalid Config.%s %v: %s", e.Field, e.Value, e.Reason)
}

// PanicHandler receives a value recovered from a panicking task, the context the
// task was submitted with (context.Background for [Pool.Go]) and the stack of the
// panicking goroutine. It runs on the worker goroutine, after the panic; a panic
// inside the handler is recovered and dropped, and a runtime.Goexit in it ends
// the worker as a task's would (the pool replaces it when tasks are queued).
type PanicHandler func(ctx context.Context, recovered any, stack []byte)

// Config configures a [Pool]. A zero field means its default.
type Config struct {
	// MaxWorkers bounds the number of worker goroutines. Default 10000
	// ([DefaultMaxWorkers]). Negative is invalid.
	MaxWorkers int
	// IdleTimeout is how long a worker with nothing to do stays before it exits.
	// Idle workers are retired by a timer that ticks every IdleTimeout, so a
	// worker exits after between IdleTimeout and 2*IdleTimeout of idleness.
	// Default 10 s ([DefaultIdleTimeout]). Negative is invalid, and so is a
	// positive value below 1 ms ([MinIdleTimeout]): a timer ticking every few
	// nanoseconds would keep a core busy.
	IdleTimeout time.Duration
	// PanicHandler is called when a task panics. Default nil: the panic is
	// recovered and dropped (library code never prints).
	PanicHandler PanicHandler
}

// DefaultConfig returns the configuration that zero fields stand for.
func DefaultConfig() Config {
	return Config{MaxWorkers: DefaultMaxWorkers, IdleTimeout: DefaultIdleTimeout}
}

// Validate reports the first field that cannot be used, as a *[ConfigError].
func (c Config) Validate() error {
	if c.MaxWorkers < 0 {
		return &ConfigError{Field: "MaxWorkers", Value: c.MaxWorkers, Reason: "must not be negative"}
	}
	if c.IdleTimeout < 0 {
		return &ConfigError{Field: "IdleTimeout", Value: c.IdleTimeout, Reason: "must not be negative"}
	}
	if c.IdleTimeout > 0 && c.IdleTimeout < MinIdleTimeout {
		return &ConfigError{Field: "IdleTimeout", Value: c.IdleTimeout, Reason: "must be 0 (default) or at least " + MinIdleTimeout.String() + ": the idle timer ticks every IdleTimeout while workers live"}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.MaxWorkers == 0 {
		c.MaxWorkers = DefaultMaxWorkers
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	return c
}

// Pool is a bounded pool of reused goroutines. Its methods are safe for
// concurrent use. Create one with [New].
//
// Locking: every mutable field is guarded by mu, which is held only for O(1)
// bookkeeping (never while a task or the panic handler runs, never while
// sending on a channel). A worker's fn and ctx are written under mu by the
// goroutine that takes the worker off the idle stack and read by the worker
// after it receives from its wake channel.
type Pool struct {
	cfg Config // read-only after New

	mu      sync.Mutex
	workers int       // guarded by mu: live worker goroutines, busy or idle
	idle    []*worker // guarded by mu: idle workers, a stack; the oldest at index 0
	waking  int       // guarded by mu: workers handed a task that have not started it
	queue   taskRing  // guarded by mu: tasks waiting for a worker, FIFO
	closed  bool      // guarded by mu: set once by Shutdown
	done    chan struct{}
	// done is closed (under mu) when closed is set and workers is 0.

	epoch    uint64      // guarded by mu: ticks of the idle timer so far
	reaper   *time.Timer // guarded by mu: retires idle workers; created on first spawn
	reaperOn bool        // guarded by mu: reaper is armed
	spawned  uint64      // guarded by mu: worker goroutines ever started (for tests)
	doneOnce bool        // guarded by mu: done was closed
}

// worker is one pooled goroutine. fn and ctx carry the next task from the
// goroutine that popped the worker off Pool.idle (which writes them under
// Pool.mu) to the worker, which reads them after receiving from wake; a nil fn
// tells the worker to exit. epoch is guarded by Pool.mu.
type worker struct {
	p     *Pool
	wake  chan struct{} // capacity 1: a send never blocks
	fn    func()
	ctx   context.Context
	epoch uint64 // guarded by Pool.mu: Pool.epoch when the worker went idle
}

// New returns a Pool configured by cfg, with zero fields set to their defaults.
// It starts no goroutine; workers start as tasks arrive.
func New(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Pool{cfg: cfg, done: make(chan struct{})}, nil
}

// Go runs f on a pool worker. It never blocks and never drops f: when all
// MaxWorkers workers are busy, f waits in the FIFO queue. After Close, f runs on
// a goroutine of its own (see the package comment). A nil f is ignored.
func (p *Pool) Go(f func()) {
	p.CtxGo(context.Background(), f)
}

// CtxGo is [Pool.Go] with a context that is passed to the PanicHandler if f
// panics. The pool does not watch ctx: a queued task runs even if ctx is done.
func (p *Pool) CtxGo(ctx context.Context, f func()) {
	if f == nil {
		return
	}
	if !p.submit(ctx, f) {
		go p.stray(ctx, f)
	}
}

// Submit is [Pool.CtxGo] that reports instead of running f outside the pool:
// it returns [ErrClosed] after Close and [ErrNilFunc] for a nil f, and nil once
// f is handed to a worker or queued.
func (p *Pool) Submit(ctx context.Context, f func()) error {
	if f == nil {
		return ErrNilFunc
	}
	if !p.submit(ctx, f) {
		return ErrClosed
	}
	return nil
}

// submit hands f to an idle worker, a new worker or the queue, and reports
// false if the pool is closed.
//
// While a worker handed a task has not yet started it (waking > 0), f is
// queued instead: that worker, or the one it wakes (see started), takes it.
// So an event loop handing out the requests of one poll wakes two workers,
// not one per request, and where processors are few one worker runs the
// batch without a goroutine switch per task; a task that blocks delays the
// queue by no more than the time the next worker takes to start.
func (p *Pool) submit(ctx context.Context, f func()) bool {
	t := task{fn: f, ctx: ctx}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	if p.waking == 0 {
		if h := p.handLocked(t); h.w != nil {
			p.mu.Unlock()
			h.start()
			return true
		}
	}
	p.queue.push(t)
	p.mu.Unlock()
	return true
}

// handoff is a task given to a worker, to be started once p.mu is released.
type handoff struct {
	w     *worker // nil: no worker could take the task
	t     task
	spawn bool // w is new: start its goroutine; otherwise wake it
}

// handLocked gives t to an idle worker, or to a new one if fewer than
// MaxWorkers live. p.mu must be held; the caller starts the returned
// handoff after releasing it. It also serves tasks queued before Shutdown
// (see started): those were accepted, and may need a worker of their own
// while the pool closes, as they would have had had they not been queued.
func (p *Pool) handLocked(t task) handoff {
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		w.fn, w.ctx = t.fn, t.ctx
		p.waking++
		return handoff{w: w}
	}
	if p.workers >= p.cfg.MaxWorkers {
		return handoff{}
	}
	p.workers++
	p.spawned++
	p.waking++
	if !p.closed {
		p.armReaperLocked()
	}
	return handoff{w: &worker{p: p, wake: make(chan struct{}, 1)}, t: t, spawn: true}
}

func (h handoff) start() {
	if h.spawn {
		go h.w.run(h.t.ctx, h.t.fn)
	} else {
		h.w.wake <- struct{}{} // room for one: never blocks
	}
}

// started is called by a worker about to run the task it was handed. When
// tasks are queued and no other worker is on its way, it hands the oldest
// to one, so that the queue keeps a worker coming while this one runs.
func (p *Pool) started() {
	p.mu.Lock()
	p.waking--
	var h handoff
	if p.waking == 0 && p.queue.n > 0 {
		if h = p.handLocked(p.queue.buf[p.queue.head]); h.w != nil {
			p.queue.pop()
		}
	}
	p.mu.Unlock()
	if h.w != nil {
		h.start()
	}
}

// run is a worker's loop: run the task, then the queue, then wait to be woken.
func (w *worker) run(ctx context.Context, fn func()) {
	p := w.p
	p.started()
	for {
		p.call(ctx, fn, true)
		p.mu.Lock()
		if p.queue.n > 0 {
			t := p.queue.pop()
			p.mu.Unlock()
			ctx, fn = t.ctx, t.fn
			continue
		}
		if p.closed {
			p.exitLocked()
			p.mu.Unlock()
			return
		}
		w.epoch = p.epoch
		p.idle = append(p.idle, w)
		p.mu.Unlock()

		<-w.wake
		ctx, fn = w.ctx, w.fn
		w.ctx, w.fn = nil, nil
		if fn != nil {
			p.started()
		} else {
			// Retired by the reaper or by Shutdown, which took w off the
			// idle stack. A task submitted since then found no idle worker
			// and, w still being counted, may have been queued: w runs it
			// rather than leave it with no worker, and the idle timer,
			// which stopped if w was the last, runs again.
			p.mu.Lock()
			if p.queue.n > 0 {
				t := p.queue.pop()
				if !p.closed {
					p.armReaperLocked()
				}
				p.mu.Unlock()
				ctx, fn = t.ctx, t.fn
				continue
			}
			p.exitLocked()
			p.mu.Unlock()
			return
		}
	}
}

// call runs fn, recovering a panic. If fn calls runtime.Goexit, the goroutine
// ends inside this call; when it is a worker (worker is true), the pool then
// accounts for it with workerGoexit.
func (p *Pool) call(ctx context.Context, fn func(), worker bool) {
	panicked := true
	defer func() {
		if !panicked {
			return
		}
		// Since Go 1.21 panic(nil) recovers as *runtime.PanicNilError, so a
		// nil recover() here means runtime.Goexit.
		if r := recover(); r != nil {
			p.reportPanic(ctx, r, worker)
		} else if worker {
			p.workerGoexit()
		}
	}()
	fn()
	panicked = false
}

// reportPanic passes r to the PanicHandler. A handler that panics is
// recovered; one that calls runtime.Goexit ends the goroutine, which, when it
// is a worker, the pool accounts for as for a task's Goexit.
func (p *Pool) reportPanic(ctx context.Context, r any, worker bool) {
	h := p.cfg.PanicHandler
	if h == nil {
		return
	}
	stack := debug.Stack()
	returned := false
	defer func() {
		if returned {
			return
		}
		// A panicking handler must not kill the worker; a nil recover()
		// means runtime.Goexit, as in call.
		if recover() == nil && worker {
			p.workerGoexit()
		}
	}()
	h(ctx, r, stack)
	returned = true
}

// workerGoexit keeps the pool's promises when a task ends its worker with
// runtime.Goexit: a queued task gets a replacement worker, so the queue never
// stalls, and otherwise the worker count drops.
func (p *Pool) workerGoexit() {
	p.mu.Lock()
	if p.queue.n > 0 {
		t := p.queue.pop()
		p.spawned++
		p.waking++ // the replacement's run calls started
		p.mu.Unlock()
		w := &worker{p: p, wake: make(chan struct{}, 1)}
		go w.run(t.ctx, t.fn)
		return
	}
	p.exitLocked()
	p.mu.Unlock()
}

// exitLocked accounts for a worker that is exiting. p.mu must be held.
func (p *Pool) exitLocked() {
	p.workers--
	if p.closed && p.workers == 0 && !p.doneOnce {
		p.doneOnce = true
		close(p.done)
	}
}

// stray runs a task submitted after Close.
func (p *Pool) stray(ctx context.Context, f func()) {
	p.call(ctx, f, false)
}

// armReaperLocked makes sure the idle timer runs while workers exist. p.mu
// must be held.
func (p *Pool) armReaperLocked() {
	if p.reaperOn {
		return
	}
	p.reaperOn = true
	if p.reaper == nil {
		p.reaper = time.AfterFunc(p.cfg.IdleTimeout, p.reap)
		return
	}
	p.reaper.Reset(p.cfg.IdleTimeout)
}

// reap runs every IdleTimeout while workers exist. It retires idle workers that
// went idle before the previous tick, so each has been idle at least one full
// IdleTimeout. Idle workers sit on the stack in the order they went idle, so
// they are a prefix of it.
func (p *Pool) reap() {
	p.mu.Lock()
	if p.closed {
		p.reaperOn = false
		p.mu.Unlock()
		return
	}
	p.epoch++
	n := 0
	for n < len(p.idle) && p.idle[n].epoch+2 <= p.epoch {
		n++
	}
	old := make([]*worker, n)
	copy(old, p.idle[:n])
	m := copy(p.idle, p.idle[n:])
	clear(p.idle[m:])
	p.idle = p.idle[:m]
	if p.workers-n > 0 {
		p.reaper.Reset(p.cfg.IdleTimeout)
	} else {
		p.reaperOn = false
	}
	p.mu.Unlock()
	for _, w := range old {
		w.wake <- struct{}{} // fn is nil: exit
	}
}

// Shutdown stops the pool from taking new tasks, lets queued and running tasks
// finish and waits until every worker has exited or ctx is done, returning
// ctx.Err() in that case (the workers still exit as their tasks end). Workers
// idle when it is called have no task to finish: it always waits for them,
// so with none running it returns nil even if ctx has already ended. It may
// be called more than once and concurrently.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	var idle []*worker
	onlyIdle := false // every worker is idle: none has a task to finish
	if !p.closed {
		p.closed = true
		idle = p.idle
		p.idle = nil
		onlyIdle = p.workers == len(idle)
		if p.reaper != nil {
			p.reaper.Stop()
			p.reaperOn = false
		}
		if p.workers == 0 && !p.doneOnce {
			p.doneOnce = true
			close(p.done)
		}
	}
	p.mu.Unlock()
	for _, w := range idle {
		w.wake <- struct{}{} // fn is nil: exit
	}
	if onlyIdle {
		// They exit as soon as they run, having no task: not worth an
		// error even when ctx has already ended.
		<-p.done
		return nil
	}
	// A select with both ready picks either: done is checked first, so an
	// ended ctx does not turn a completed shutdown into an error.
	select {
	case <-p.done:
		return nil
	default:
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close is Shutdown without a deadline: it returns once every worker has
// exited. It always returns nil.
func (p *Pool) Close() error {
	return p.Shutdown(context.Background())
}

// Stats is a snapshot of a pool's state.
type Stats struct {
	Workers int // live worker goroutines
	Running int // workers running a task
	Idle    int // workers waiting for a task
	Queued  int // tasks waiting for a worker
}

// Stats returns a consistent snapshot of the pool's counts.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Workers: p.workers, Running: p.workers - len(p.idle), Idle: len(p.idle), Queued: p.queue.n}
}

// Running returns the number of workers running a task.
func (p *Pool) Running() int { return p.Stats().Running }

// Idle returns the number of workers waiting for a task.
func (p *Pool) Idle() int { return p.Stats().Idle }

// task is one queued submission.
type task struct {
	fn  func()
	ctx context.Context
}

// taskRing is a FIFO of tasks in a ring whose size is a power of two.
type taskRing struct {
	buf  []task
	head int // index of the oldest task
	n    int // number of tasks
}

func (q *taskRing) push(t task) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = t
	q.n++
}

func (q *taskRing) pop() task {
	t := q.buf[q.head]
	q.buf[q.head] = task{} // drop references for the collector
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return t
}

func (q *taskRing) grow() {
	size := 2 * len(q.buf)
	if size == 0 {
		size = 16
	}
	buf := make([]task, size)
	for i := 0; i < q.n; i++ {
		buf[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = buf, 0
}
