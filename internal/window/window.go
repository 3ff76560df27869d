// Package window is a lock-free sliding window of time buckets, each counting
// two quantities; the retry budget and the circuit breaker both count over
// one.
package window

import (
	"sync/atomic"
	"time"
)

// Window is a ring of time buckets. Init it before use; its methods are
// safe for concurrent use.
type Window struct {
	width   int64 // nanoseconds per bucket
	buckets []bucket
}

type bucket struct {
	epoch atomic.Int64 // the slice of time (now/width) its counts belong to; -1: none
	a, b  atomic.Int64 // the counts of that slice
}

// Init sets the window to span d in n buckets and empties it.
func (w *Window) Init(d time.Duration, n int) {
	w.width = int64(d) / int64(n)
	w.buckets = make([]bucket, n)
	w.Reset()
}

// Reset empties the window.
func (w *Window) Reset() {
	for i := range w.buckets {
		w.buckets[i].epoch.Store(-1)
		w.buckets[i].a.Store(0)
		w.buckets[i].b.Store(0)
	}
}

// Add counts da and db at time now (UnixNano).
func (w *Window) Add(now int64, da, db int64) {
	e := now / w.width
	bk := &w.buckets[e%int64(len(w.buckets))]
	if old := bk.epoch.Load(); old < e {
		if bk.epoch.CompareAndSwap(old, e) {
			bk.a.Store(0)
			bk.b.Store(0)
		}
	}
	if da != 0 {
		bk.a.Add(da)
	}
	if db != 0 {
		bk.b.Add(db)
	}
}

// Sum returns the two counts over the window ending at now (UnixNano).
func (w *Window) Sum(now int64) (a, b int64) {
	e := now / w.width
	n := int64(len(w.buckets))
	for i := range w.buckets {
		bk := &w.buckets[i]
		if be := bk.epoch.Load(); be >= 0 && be <= e && e-be < n {
			a += bk.a.Load()
			b += bk.b.Load()
		}
	}
	return a, b
}
