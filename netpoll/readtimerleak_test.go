//go:build linux

package netpoll

import (
	"errors"
	"testing"
	"time"
)

// TestClosedConnectionLeavesNoReadTimer: a connection closed after a read
// that armed its deadline timer for a distant deadline must not leave that
// timer armed. The timer is a time.AfterFunc: while armed it stays in the
// runtime's timer heap, with what its function holds, until it fires, so
// every such connection would keep memory until its deadline, or for good
// for a deadline past 2262. Closed between reads and closed while a reader
// waits.
func TestClosedConnectionLeavesNoReadTimer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Time
		waiting  bool
	}{
		{"deadline an hour away, closed between reads", time.Now().Add(time.Hour), false},
		{"deadline after 2262, closed between reads", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"deadline an hour away, closed while a reader waits", time.Now().Add(time.Hour), true},
	} {
		c, s := dialPair(t)
		if err := c.SetReadDeadline(tc.deadline); err != nil {
			t.Fatal(err)
		}
		read := make(chan error, 1)
		go func() {
			_, err := c.Next(1)
			read <- err
		}()
		// The read arms the timer just before it waits.
		for end := time.Now().Add(5 * time.Second); c.rtimer.Load() == nil; {
			if time.Now().After(end) {
				t.Fatalf("%s: the read armed no deadline timer within 5 s", tc.name)
			}
			time.Sleep(time.Millisecond)
		}
		if !tc.waiting {
			if _, err := s.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if err := <-read; err != nil {
				t.Fatalf("%s: read: %v", tc.name, err)
			}
		}
		c.Close()
		if tc.waiting {
			if err := <-read; !errors.Is(err, ErrConnClosed) {
				t.Fatalf("%s: the waiting read returned %v, want ErrConnClosed", tc.name, err)
			}
		}
		if c.rtimer.Load().Stop() {
			t.Errorf("%s: the read deadline timer is still armed after Close", tc.name)
		}
	}
}
