package gopool_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/petrel-rpc/petrel/gopool"
)

// TestPanicHandlerGoexit checks that a PanicHandler that ends its goroutine
// with runtime.Goexit (as t.FailNow in a test's handler does) costs the pool
// no capacity: the queued tasks still run, the worker count drops, and
// Shutdown returns.
func TestPanicHandlerGoexit(t *testing.T) {
	p := newPool(t, gopool.Config{MaxWorkers: 1, PanicHandler: func(context.Context, any, []byte) {
		runtime.Goexit()
	}})
	release := make(chan struct{})
	p.Go(func() { <-release; panic("boom") })
	var wg sync.WaitGroup
	wg.Add(3)
	for range 3 {
		p.Go(wg.Done)
	}
	close(release)
	waitFor(t, "the 3 queued tasks to run", func() bool { return p.Stats().Queued == 0 && p.Stats().Running == 0 })
	wg.Wait()
	waitFor(t, "one idle worker", func() bool { st := p.Stats(); return st.Workers == 1 && st.Idle == 1 })

	// With nothing queued, the worker count drops.
	p.Go(func() { panic("again") })
	waitFor(t, "no workers", func() bool { return p.Stats().Workers == 0 })
}
