//go:build linux

package netpoll_test

import (
	"testing"
	"time"
)

// TestReadDeadlineTimerFiredWhileNoReader: a read deadline's timer that
// fires while no reader waits (its read got its input first) must not end a
// later read early, whose deadline is later; and a read whose input never
// comes still ends at its deadline.
func TestReadDeadlineTimerFiredWhileNoReader(t *testing.T) {
	c, sc, _, _ := silentPair(t)
	r := c.Reader()
	sent := make(chan struct{}, 2)
	send := func(b string) {
		defer func() { sent <- struct{}{} }()
		w := sc.Writer()
		// send may run in a goroutine of its own: it reports, not stops.
		if _, err := w.WriteBinary([]byte(b)); err != nil {
			t.Error(err)
			return
		}
		if err := w.Flush(); err != nil {
			t.Error(err)
		}
	}

	// A wait arms the timer for 30 ms; its input comes at once.
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	go send("a")
	if _, err := r.Next(1); err != nil {
		t.Fatalf("first read: %v", err)
	}
	r.Release()
	<-sent
	time.Sleep(60 * time.Millisecond) // the timer fires; no reader waits

	// The next read's deadline is 2 s away; its input comes after 100 ms.
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	go func() { time.Sleep(100 * time.Millisecond); send("b") }()
	start := time.Now()
	if b, err := r.Next(1); err != nil || string(b) != "b" {
		t.Fatalf("second read after %v: %q, %v; want \"b\" (its deadline was 2 s away)", time.Since(start), b, err)
	}
	r.Release()
	<-sent

	// No input: the read ends at its deadline.
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	start = time.Now()
	_, err := r.Next(1)
	if took := time.Since(start); err == nil || took < 40*time.Millisecond || took > 2*time.Second {
		t.Fatalf("read with no input: %v after %v; want a timeout after about 50 ms", err, took)
	}
}
