package gopool_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/petrel-rpc/petrel/gopool"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newPool(t *testing.T, cfg gopool.Config) *gopool.Pool {
	t.Helper()
	p, err := gopool.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return p
}

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := gopool.DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	if err := (gopool.Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: Validate() = %v", err)
	}
	for _, tc := range []struct {
		cfg   gopool.Config
		field string
	}{
		{gopool.Config{MaxWorkers: -1}, "MaxWorkers"},
		{gopool.Config{IdleTimeout: -time.Second}, "IdleTimeout"},
	} {
		err := tc.cfg.Validate()
		var ce *gopool.ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("Validate(%+v) = %v, want a *ConfigError for %s", tc.cfg, err, tc.field)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("error %q does not name %s", err, tc.field)
		}
		if p, err := gopool.New(tc.cfg); p != nil || err == nil {
			t.Errorf("New(%+v) = %v, %v; want nil and an error", tc.cfg, p, err)
		}
	}
}

// TestBound submits many blocking tasks and checks that no more than
// MaxWorkers run at once, that exactly MaxWorkers do while saturated, and that
// the rest wait in the queue.
func TestBound(t *testing.T) {
	const max, tasks = 4, 50
	p := newPool(t, gopool.Config{MaxWorkers: max})
	release := make(chan struct{})
	var cur, peak atomic.Int32
	var wg sync.WaitGroup
	wg.Add(tasks)
	for range tasks {
		p.Go(func() {
			defer wg.Done()
			n := cur.Add(1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			<-release
			cur.Add(-1)
		})
	}
	waitFor(t, "max tasks running", func() bool { return cur.Load() == max })
	st := p.Stats()
	if st.Workers != max || st.Running != max || st.Idle != 0 || st.Queued != tasks-max {
		t.Errorf("saturated Stats = %+v, want %d workers all running and %d queued", st, max, tasks-max)
	}
	close(release)
	wg.Wait()
	if got := peak.Load(); got > max {
		t.Errorf("peak concurrent tasks = %d, bound %d", got, max)
	}
	if got := p.Spawned(); got > max {
		t.Errorf("spawned %d workers, bound %d", got, max)
	}
}

// TestFIFO checks that queued tasks run in submission order.
func TestFIFO(t *testing.T) {
	const tasks = 200
	p := newPool(t, gopool.Config{MaxWorkers: 1})
	release := make(chan struct{})
	started := make(chan struct{})
	p.Go(func() { close(started); <-release })
	<-started
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	wg.Add(tasks)
	for i := range tasks {
		p.Go(func() {
			defer wg.Done()
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		})
	}
	if q := p.Stats().Queued; q != tasks {
		t.Fatalf("Queued = %d, want %d", q, tasks)
	}
	close(release)
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("task %d ran at position %d; order %v", v, i, order)
		}
	}
}

// TestReuse checks that many tasks run on at most MaxWorkers goroutines, and
// that sequential tasks run on one worker.
func TestReuse(t *testing.T) {
	const max = 8
	p := newPool(t, gopool.Config{MaxWorkers: max})
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	var ran atomic.Int64
	f := func() { ran.Add(1); wg.Done() }
	for range 100 {
		wg.Add(100)
		for range 100 {
			p.Go(f)
		}
		wg.Wait()
	}
	if ran.Load() != 10000 {
		t.Fatalf("ran %d tasks, want 10000", ran.Load())
	}
	if got := p.Spawned(); got > max {
		t.Errorf("spawned %d workers for 10000 tasks, bound %d", got, max)
	}
	if g := runtime.NumGoroutine() - before; g > max {
		t.Errorf("%d more goroutines after 10000 tasks, bound %d", g, max)
	}

	q := newPool(t, gopool.Config{MaxWorkers: max})
	for range 50 {
		done := make(chan struct{})
		q.Go(func() { close(done) })
		<-done
		waitFor(t, "the worker to go idle", func() bool { return q.Idle() == 1 })
	}
	if got := q.Spawned(); got != 1 {
		t.Errorf("50 sequential tasks spawned %d workers, want 1", got)
	}
}

type ctxKey struct{}

func TestPanicRecovered(t *testing.T) {
	type report struct {
		ctx       context.Context
		recovered any
		stack     string
	}
	reports := make(chan report, 1)
	p := newPool(t, gopool.Config{MaxWorkers: 1, PanicHandler: func(ctx context.Context, r any, stack []byte) {
		reports <- report{ctx, r, string(stack)}
	}})
	ctx := context.WithValue(context.Background(), ctxKey{}, "request-7")
	p.CtxGo(ctx, func() { panicky("boom") })
	r := <-reports
	if r.recovered != "boom" {
		t.Errorf("recovered %v, want boom", r.recovered)
	}
	if r.ctx.Value(ctxKey{}) != "request-7" {
		t.Errorf("handler got a context without the task's value")
	}
	if !strings.Contains(r.stack, "panicky") {
		t.Errorf("stack does not show the panicking function:\n%s", r.stack)
	}

	// The worker keeps serving: the next task runs on the same goroutine.
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
	if got := p.Spawned(); got != 1 {
		t.Errorf("spawned %d workers after a panic, want the same 1 reused", got)
	}

	// panic(nil) is reported too, not mistaken for runtime.Goexit.
	p.Go(func() { panic(nil) })
	r = <-reports
	var pn *runtime.PanicNilError
	if err, ok := r.recovered.(error); !ok || !errors.As(err, &pn) {
		t.Errorf("panic(nil) recovered as %v, want *runtime.PanicNilError", r.recovered)
	}
}

//go:noinline
func panicky(v any) { panic(v) }

func TestPanicWithoutHandlerAndPanickingHandler(t *testing.T) {
	for _, h := range []gopool.PanicHandler{nil, func(context.Context, any, []byte) { panic("handler too") }} {
		p := newPool(t, gopool.Config{MaxWorkers: 2, PanicHandler: h})
		var wg sync.WaitGroup
		var ok atomic.Int32
		for i := range 20 {
			wg.Add(1)
			p.Go(func() {
				defer wg.Done()
				if i%2 == 0 {
					panic(i)
				}
				ok.Add(1)
			})
		}
		wg.Wait()
		if ok.Load() != 10 {
			t.Errorf("handler %v: %d good tasks ran, want 10", h != nil, ok.Load())
		}
		if got := p.Spawned(); got > 2 {
			t.Errorf("spawned %d workers, bound 2", got)
		}
	}
}

// TestGoexit checks that a task calling runtime.Goexit (as t.FailNow does)
// neither stalls the queue nor breaks the bound.
func TestGoexit(t *testing.T) {
	p := newPool(t, gopool.Config{MaxWorkers: 1})
	release := make(chan struct{})
	p.Go(func() { <-release; runtime.Goexit() })
	var wg sync.WaitGroup
	wg.Add(3)
	for range 3 {
		p.Go(wg.Done)
	}
	close(release)
	wg.Wait()
	waitFor(t, "one idle worker", func() bool { st := p.Stats(); return st.Workers == 1 && st.Idle == 1 })

	// With nothing queued, the worker count drops.
	done := make(chan struct{})
	p.Go(func() { close(done); runtime.Goexit() })
	<-done
	waitFor(t, "no workers", func() bool { return p.Stats().Workers == 0 })
}

// TestIdleTimeout checks that idle workers exit, and not before IdleTimeout.
func TestIdleTimeout(t *testing.T) {
	const idle = 30 * time.Millisecond
	p := newPool(t, gopool.Config{MaxWorkers: 10, IdleTimeout: idle})
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(5)
	for range 5 {
		p.Go(func() { started.Done(); <-release })
	}
	started.Wait()
	close(release)
	waitFor(t, "5 idle workers", func() bool { return p.Idle() == 5 })
	idleSince := time.Now()
	waitFor(t, "idle workers to exit", func() bool { return p.Stats().Workers == 0 })
	if el := time.Since(idleSince); el < idle {
		t.Errorf("idle workers exited after %v, before IdleTimeout %v", el, idle)
	}

	// The pool works again afterwards and retires the new worker too.
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
	waitFor(t, "the new worker to exit", func() bool { return p.Stats().Workers == 0 })
}

// TestIdleTimeoutKeepsBusyWorkers checks that a worker that keeps getting work
// more often than IdleTimeout is not retired.
func TestIdleTimeoutKeepsBusyWorkers(t *testing.T) {
	const idle = 40 * time.Millisecond
	p := newPool(t, gopool.Config{MaxWorkers: 1, IdleTimeout: idle})
	var maxGap time.Duration
	var idleFrom time.Time // the worker goes idle after this
	end := time.Now().Add(6 * idle)
	for time.Now().Before(end) {
		if !idleFrom.IsZero() {
			maxGap = max(maxGap, time.Since(idleFrom))
		}
		done := make(chan struct{})
		p.Go(func() { close(done) })
		<-done
		idleFrom = time.Now()
		time.Sleep(idle / 20)
	}
	if maxGap >= idle {
		// A loaded machine slept past IdleTimeout: retiring was allowed.
		t.Skipf("a gap between tasks reached %v, not below IdleTimeout %v", maxGap, idle)
	}
	if got := p.Spawned(); got != 1 {
		t.Errorf("a worker never idle for %v (IdleTimeout %v) was replaced: spawned %d", maxGap, idle, got)
	}
}

// TestCloseWaits checks that Close lets running and queued tasks finish, and
// only then returns.
func TestCloseWaits(t *testing.T) {
	p, err := gopool.New(gopool.Config{MaxWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	var finished, queuedRan atomic.Bool
	p.Go(func() { close(started); <-release; finished.Store(true) })
	p.Go(func() { queuedRan.Store(true) })
	<-started
	closed := make(chan struct{})
	go func() { _ = p.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a task was running")
	case <-time.After(50 * time.Millisecond):
	}
	if err := p.Submit(context.Background(), func() {}); !errors.Is(err, gopool.ErrClosed) {
		t.Errorf("Submit during Close = %v, want ErrClosed", err)
	}
	close(release)
	<-closed
	if !finished.Load() || !queuedRan.Load() {
		t.Errorf("Close returned before tasks finished: running %v, queued %v", finished.Load(), queuedRan.Load())
	}
	if st := p.Stats(); st.Workers != 0 {
		t.Errorf("after Close: %+v, want no workers", st)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestShutdownDeadline(t *testing.T) {
	p, err := gopool.New(gopool.Config{})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	p.Go(func() { close(started); <-release })
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown with a blocked task = %v, want DeadlineExceeded", err)
	}
	close(release)
	if err := p.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

func TestAfterClose(t *testing.T) {
	p, err := gopool.New(gopool.Config{MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Idle workers exit on Close.
	var wg sync.WaitGroup
	wg.Add(2)
	p.Go(wg.Done)
	p.Go(wg.Done)
	wg.Wait()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Submit(context.Background(), func() { t.Error("ran after Close") }); !errors.Is(err, gopool.ErrClosed) {
		t.Errorf("Submit after Close = %v, want ErrClosed", err)
	}
	// Go after Close still runs the task, with panic recovery.
	done := make(chan struct{})
	p.Go(func() { defer close(done); panic("late") })
	<-done
	if err := p.Submit(context.Background(), nil); !errors.Is(err, gopool.ErrNilFunc) {
		t.Errorf("Submit(nil) = %v, want ErrNilFunc", err)
	}
	p.Go(nil) // ignored, no panic
}

func TestSubmit(t *testing.T) {
	p := newPool(t, gopool.Config{})
	done := make(chan struct{})
	if err := p.Submit(context.Background(), func() { close(done) }); err != nil {
		t.Fatalf("Submit = %v", err)
	}
	<-done
	if err := p.Submit(context.Background(), nil); !errors.Is(err, gopool.ErrNilFunc) {
		t.Errorf("Submit(nil) = %v, want ErrNilFunc", err)
	}
}

// TestDefaultPool runs tasks on the package-level pool and checks that
// WorkerTopFunction names its idle workers as goleak sees them.
func TestDefaultPool(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(4)
	for range 3 {
		gopool.Go(wg.Done)
	}
	gopool.CtxGo(context.Background(), wg.Done)
	wg.Wait()
	waitFor(t, "default pool workers to go idle", func() bool {
		return gopool.DefaultPool().Running() == 0
	})
	if gopool.DefaultPool().Idle() == 0 {
		t.Fatal("default pool has no idle worker")
	}
	if err := goleak.Find(); err == nil {
		t.Fatal("goleak sees no default pool worker")
	}
	if err := goleak.Find(goleak.IgnoreTopFunction(gopool.WorkerTopFunction)); err != nil {
		t.Errorf("WorkerTopFunction does not match idle workers: %v", err)
	}
	gopool.ResetDefaultPool()
}

// TestRace hammers one pool from many goroutines under -race.
func TestRace(t *testing.T) {
	p := newPool(t, gopool.Config{MaxWorkers: 16, IdleTimeout: time.Millisecond})
	var wg sync.WaitGroup
	var sum atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inner sync.WaitGroup
			for i := range 500 {
				inner.Add(1)
				p.CtxGo(context.Background(), func() {
					defer inner.Done()
					sum.Add(int64(g*1000 + i))
					if i%100 == 0 {
						time.Sleep(time.Millisecond) // let idle workers time out
					}
				})
				_ = p.Stats()
			}
			inner.Wait()
		}()
	}
	wg.Wait()
	var want int64
	for g := range 8 {
		for i := range 500 {
			want += int64(g*1000 + i)
		}
	}
	if sum.Load() != want {
		t.Errorf("sum = %d, want %d", sum.Load(), want)
	}
	if got := p.Stats().Workers; got > 16 {
		t.Errorf("%d workers, bound 16", got)
	}
}

// TestShutdownEndedCtxIdlePool checks that Shutdown with a context that has
// already ended reports success when there is nothing to wait for (a pool
// without workers): ctx.Err() would tell the caller that tasks were still
// running.
func TestShutdownEndedCtxIdlePool(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 200 {
		p, err := gopool.New(gopool.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Shutdown(ctx); err != nil {
			t.Fatalf("run %d: Shutdown of an empty pool with an ended ctx = %v, want nil", i, err)
		}
	}
}

// TestShutdownEndedCtxIdleWorkers checks that Shutdown with a context that has
// already ended reports success when no task runs: its idle workers exit at
// once, without a task to wait for, so Shutdown waits for them (an event
// loop's own pool keeps idle workers after its connections close).
func TestShutdownEndedCtxIdleWorkers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 50 {
		p, err := gopool.New(gopool.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(3)
		release := make(chan struct{})
		for range 3 {
			p.Go(func() { wg.Done(); <-release })
		}
		wg.Wait()
		close(release)
		waitFor(t, "three idle workers", func() bool { return p.Stats().Idle == 3 })
		if err := p.Shutdown(ctx); err != nil {
			t.Fatalf("run %d: Shutdown of an idle pool with an ended ctx = %v, want nil", i, err)
		}
		if st := p.Stats(); st.Workers != 0 {
			t.Fatalf("run %d: after Shutdown: %+v, want no workers", i, st)
		}
	}
}

// TestBatchWakesFewWorkers checks that a batch submitted at once, the way an
// event loop hands out one poll's requests, is run by a worker or two rather
// than by a worker per task: while a worker handed a task has not started,
// further tasks queue for it.
func TestBatchWakesFewWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const tasks = 64
	p := newPool(t, gopool.Config{})
	var wg sync.WaitGroup
	wg.Add(tasks)
	for range tasks {
		p.Go(wg.Done)
	}
	wg.Wait()
	// One worker is handed the first task; on starting it hands the queue's
	// head to a second, so that a blocking task cannot hold the queue.
	if got := p.Spawned(); got > 4 {
		t.Errorf("a batch of %d tasks spawned %d workers, want at most 4", tasks, got)
	}
}

// TestBlockedTaskDoesNotHoldQueue checks that tasks queued behind a worker
// whose task blocks still run: each worker that starts while tasks wait
// hands one to another worker.
func TestBlockedTaskDoesNotHoldQueue(t *testing.T) {
	for _, procs := range []int{1, 2} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			p := newPool(t, gopool.Config{})
			release := make(chan struct{})
			defer close(release)
			const tasks = 100
			var wg sync.WaitGroup
			wg.Add(tasks)
			// Before every third task, one that blocks until the end of
			// the test.
			for i := range tasks {
				if i%3 == 0 {
					p.Go(func() { <-release })
				}
				p.Go(wg.Done)
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			timer := time.NewTimer(5 * time.Second)
			defer timer.Stop()
			select {
			case <-done:
			case <-timer.C:
				t.Fatalf("GOMAXPROCS=%d: tasks queued behind blocked ones did not run within 5 s; %+v", procs, p.Stats())
			}
		}()
	}
}
