//go:build linux

package netpoll

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// parkedOnMutex reports whether a goroutine whose stack holds fn is parked
// waiting for a sync.Mutex.
func parkedOnMutex(fn string) bool {
	b := make([]byte, 1<<20)
	b = b[:runtime.Stack(b, true)]
	for _, g := range strings.Split(string(b), "\n\n") {
		if strings.Contains(g, "[sync.Mutex.Lock") && strings.Contains(g, fn) {
			return true
		}
	}
	return false
}

// running reports whether a goroutine whose stack holds fn exists.
func running(fn string) bool {
	b := make([]byte, 1<<20)
	b = b[:runtime.Stack(b, true)]
	return strings.Contains(string(b), fn)
}

// waitUntil polls cond for up to 5 s and fails t if it never holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not after 5s", what)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// TestStaleIdleCheckDoesNotCount: an idle check of a timer that
// SetIdleTimeout replaced, which had fired and was waiting for the lock when
// it did, does not count as a check of the new timeout; it used to, so the
// connection closed after half the new timeout without input.
//
// The test holds cbMu while SetIdleTimeout and then the old timer's check
// queue for it; a sync.Mutex hands itself to its first parked waiter, so
// SetIdleTimeout runs first and the old check after it. The new timer's
// first check is then called directly.
func TestStaleIdleCheckDoesNotCount(t *testing.T) {
	c, _ := dialPair(t)

	c.SetIdleTimeout(time.Hour) // the old timer: checks every 30 minutes
	c.cbMu.Lock()
	replaced := make(chan struct{})
	go func() {
		defer close(replaced)
		c.SetIdleTimeout(time.Hour) // the new one
	}()
	waitUntil(t, "SetIdleTimeout waits for cbMu", func() bool { return parkedOnMutex("(*connection).SetIdleTimeout") })
	c.idleTimer.Reset(time.Nanosecond) // the old timer fires now
	waitUntil(t, "the old timer's check waits for cbMu", func() bool { return parkedOnMutex("(*connection).checkIdle") })
	c.cbMu.Unlock()
	<-replaced
	waitUntil(t, "the old timer's check ends", func() bool { return !running("(*connection).checkIdle") })

	c.checkIdle() // the new timer's first check: the first without input
	if !c.IsActive() {
		t.Fatal("closed at the first check of the new idle timeout: a stale check of the old timer counted")
	}
}
