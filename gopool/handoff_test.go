package gopool_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/gopool"
)

// TestQueuedBehindBlockedTaskRunsAfterShutdown: a task queued while the
// worker handed the previous one had not started must still get a worker
// of its own when Shutdown runs before that worker starts. Shutdown lets
// queued tasks run; if only the first worker could run it, a first task
// that waits for the second (or just runs long) would hold it, and
// Shutdown would never return.
func TestQueuedBehindBlockedTaskRunsAfterShutdown(t *testing.T) {
	for _, procs := range []int{1, 2} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			p := newPool(t, gopool.Config{})
			secondRan := make(chan struct{})
			giveUp := make(chan struct{})
			p.Go(func() {
				select {
				case <-secondRan:
				case <-giveUp:
				}
			})
			p.Go(func() { close(secondRan) })
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			// Closes the pool without waiting; the first worker has
			// usually not started yet.
			_ = p.Shutdown(ended)
			timer := time.NewTimer(2 * time.Second)
			defer timer.Stop()
			select {
			case <-secondRan:
			case <-timer.C:
				st := p.Stats()
				close(giveUp)
				t.Fatalf("GOMAXPROCS=%d: a task queued before Shutdown, behind a task that blocks, did not run within 2 s; %+v", procs, st)
			}
		}()
	}
}
