// Package window is a lock-free sliding window of time buckets, each counting
// two quantities; the retry budget and the circuit breaker both count over
// one.
package window

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Window is a ring of time buckets. Init it before use; its methods are
// safe for concurrent use.
//
// Counting is lock-free. Moving a bucket to a new slice of time (once per
// bucket width at most) takes rotate: the bucket's counts are zeroed before
// its new epoch is published, so that no count made for the new slice is
// lost to the zeroing.
type Window struct {
	width   int64 // nanoseconds per bucket
	buckets []bucket
	rotate  sync.Mutex // serializes the moves of buckets to a new slice
	bounded sync.Mutex // serializes AddBIf calls
}

type bucket struct {
	epoch atomic.Int64 // the slice of time (now/width) its counts belong to, or none
	a, b  atomic.Int64 // the counts of that slice
}

// none is the epoch of a bucket that holds no slice. Negative times (a
// fake clock set back before the caller's base) have negative slices, so
// it is not -1.
const none = math.MinInt64

// slice returns the slice of time now belongs to: now/width rounded down,
// so that slices of negative times are as wide as the others.
func (w *Window) slice(now int64) int64 {
	e := now / w.width
	if now < 0 && e*w.width != now {
		e--
	}
	return e
}

// bucketOf returns the bucket of slice e (e modulo the ring, never negative).
func (w *Window) bucketOf(e int64) *bucket {
	i := e % int64(len(w.buckets))
	if i < 0 {
		i += int64(len(w.buckets))
	}
	return &w.buckets[i]
}

// Init sets the window to span d in n buckets and empties it.
func (w *Window) Init(d time.Duration, n int) {
	w.width = int64(d) / int64(n)
	w.buckets = make([]bucket, n)
	w.Reset()
}

// Reset empties the window.
func (w *Window) Reset() {
	w.rotate.Lock()
	defer w.rotate.Unlock()
	for i := range w.buckets {
		w.buckets[i].epoch.Store(none)
		w.buckets[i].a.Store(0)
		w.buckets[i].b.Store(0)
	}
}

// current returns the bucket of slice e, moved to e if it held an older
// slice. A caller whose clock lags (its e is older than the bucket's, by
// less than the window) gets the bucket as it is: its counts land in the
// newer slice. A bucket a whole window or more ahead of e holds a slice
// the caller's clock has gone back from (a clock without a monotonic
// reading, set back): it is moved back to e, so that the counts made from
// then on are counted where Sum looks, instead of in slices no Sum sees
// until the clock catches up.
func (w *Window) current(e int64) *bucket {
	bk := w.bucketOf(e)
	n := int64(len(w.buckets))
	if be := bk.epoch.Load(); be >= e && be-e < n {
		return bk
	}
	w.rotate.Lock()
	if be := bk.epoch.Load(); be < e || be-e >= n {
		bk.a.Store(0)
		bk.b.Store(0)
		bk.epoch.Store(e)
	}
	w.rotate.Unlock()
	return bk
}

// Add counts da and db at time now (nanoseconds on the caller's clock;
// callers count them from a base time.Time with Sub, by the monotonic
// clock, so that a wall clock set back does not move the window back).
func (w *Window) Add(now int64, da, db int64) {
	bk := w.current(w.slice(now))
	if da != 0 {
		bk.a.Add(da)
	}
	if db != 0 {
		bk.b.Add(db)
	}
}

// AddBIf counts one more b at time now if fits, given the two counts
// Sum(now) returns, allows it; it reports whether it counted.
// The test and the count are one atomic step with respect to other AddBIf
// calls, whatever their buckets, and to Add's counts of b in the current
// bucket: concurrent callers cannot together pass the bound fits sets.
// Counts of a may grow meanwhile (fits then saw fewer). AddBIf calls take
// a lock: two calls in neighbouring buckets would otherwise each count in
// its own bucket unseen by the other. Add takes none.
func (w *Window) AddBIf(now int64, fits func(a, b int64) bool) bool {
	bk := w.current(w.slice(now))
	w.bounded.Lock()
	defer w.bounded.Unlock()
	for {
		cur := bk.b.Load()
		a, b := w.Sum(now)
		if !fits(a, b) {
			return false
		}
		if bk.b.CompareAndSwap(cur, cur+1) {
			return true
		}
	}
}

// UndoB takes back one b counted at time at by Add or AddBIf.
// If at's slice has left its bucket the count has left the window already
// and nothing changes.
func (w *Window) UndoB(at int64) {
	e := w.slice(at)
	bk := w.bucketOf(e)
	w.rotate.Lock() // no move of the bucket meanwhile
	// A bucket moved back (current) may hold slice e again, counted anew:
	// never below zero.
	if bk.epoch.Load() == e {
		for {
			b := bk.b.Load()
			if b <= 0 || bk.b.CompareAndSwap(b, b-1) {
				break
			}
		}
	}
	w.rotate.Unlock()
}

// Sum returns the two counts over the window ending at now, or
// at the newest slice counted if that is later (by less than the window):
// a caller that read the clock just before another one but sums after it
// sees the other's counts, and AddBIf's bound holds for both.
func (w *Window) Sum(now int64) (a, b int64) {
	e := w.slice(now)
	n := int64(len(w.buckets))
	top := e
	for i := range w.buckets {
		if be := w.buckets[i].epoch.Load(); be > top && be-e < n {
			top = be
		}
	}
	for i := range w.buckets {
		bk := &w.buckets[i]
		if be := bk.epoch.Load(); be != none && be <= top && top-be < n {
			a += bk.a.Load()
			b += bk.b.Load()
		}
	}
	return a, b
}
