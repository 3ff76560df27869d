// Package steppedclock is a test clock for code that must keep counting by
// the monotonic clock when the wall clock is set back (NTP, an operator):
// its readings carry a monotonic reading, as time.Now's do, and the test
// can step their wall reading back while the monotonic one goes on. Tests
// only.
package steppedclock

import (
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// Clock is a clock whose readings carry a monotonic reading, as
// time.Now's do, and whose wall reading the test can step back, as NTP or
// an operator setting the time does, while the monotonic one goes on.
type Clock struct {
	start   time.Time    // time.Now when made: has a monotonic reading
	elapsed atomic.Int64 // nanoseconds since start, both readings
	back    atomic.Int64 // whole seconds the wall reading was stepped back
}

// New returns a clock at time.Now, checking (and failing t if not) that
// stepping the wall reading works on this Go version.
func New(t testing.TB) *Clock {
	c := &Clock{start: time.Now()}
	// Check that wallBack does what it should on this Go version: the wall
	// reading moves, the monotonic one (which Sub uses) does not.
	a := c.start.Add(time.Second)
	b := wallBack(a, 3600)
	if got := a.Round(0).Sub(b.Round(0)); got != time.Hour {
		t.Fatalf("wallBack moved the wall reading by %v, want 1h", got)
	}
	if got := b.Sub(c.start); got != time.Second {
		t.Fatalf("wallBack changed the monotonic reading: Sub gives %v, want 1s", got)
	}
	return c
}

// wallBack returns tm (which has a monotonic reading) with its wall reading
// sec seconds earlier. There is no API for it: it edits the wall field of
// the time.Time (the hasMonotonic layout: seconds since 1885 in bits 30 to
// 62), which newSteppedClock checks through the public API.
//
// The unsafe cast is safe: layout has the fields of time.Time in their
// order and types, and only wall's seconds are changed, in range (the
// result is checked above to read as the same instant on the monotonic
// clock and sec seconds earlier on the wall clock).
func wallBack(tm time.Time, sec int64) time.Time {
	type layout struct {
		wall uint64
		ext  int64
		loc  *time.Location
	}
	l := (*layout)(unsafe.Pointer(&tm))
	l.wall -= uint64(sec) << 30
	return tm
}

// Now reads the clock.
func (c *Clock) Now() time.Time {
	return wallBack(c.start.Add(time.Duration(c.elapsed.Load())), c.back.Load())
}

// Advance moves both readings on by d.
func (c *Clock) Advance(d time.Duration) { c.elapsed.Add(int64(d)) }

// StepBack sets the wall clock back by d (whole seconds).
func (c *Clock) StepBack(d time.Duration) { c.back.Add(int64(d / time.Second)) }
