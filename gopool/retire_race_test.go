package gopool_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/gopool"
)

// TestTaskQueuedWhileWorkerRetires: the idle timer takes a worker off the
// idle stack and only then wakes it to exit. A task submitted in between
// finds no idle worker and, with MaxWorkers live, is queued; the worker
// must run it instead of exiting, and retire later once idle again.
func TestTaskQueuedWhileWorkerRetires(t *testing.T) {
	p := newPool(t, gopool.Config{MaxWorkers: 1, IdleTimeout: 50 * time.Millisecond})
	first := make(chan struct{})
	p.Go(func() { close(first) })
	<-first
	waitFor(t, "one idle worker", func() bool { return p.Stats().Idle == 1 })

	ran := make(chan struct{})
	p.RetireIdleThen(func() { p.Go(func() { close(ran) }) })
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	select {
	case <-ran:
	case <-timer.C:
		t.Fatalf("a task submitted while the only worker was being retired did not run in 2s: %+v", p.Stats())
	}
	// The worker that ran it retires once idle: the idle timer runs again.
	waitFor(t, "the worker to retire after running the task", func() bool { return p.Stats().Workers == 0 })
}
