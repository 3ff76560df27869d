//go:build linux

package netpoll_test

import (
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// trickle starts a peer that sends piece every 40 ms, 25 times, then tail,
// until the connection fails; the returned channel closes when it is done.
func trickle(t *testing.T, piece, tail string) (netpoll.Connection, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		for i := 0; i < 25; i++ {
			if _, err := s.Write([]byte(piece)); err != nil {
				return
			}
			time.Sleep(40 * time.Millisecond)
		}
		s.Write([]byte(tail))
	}()
	c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c, done
}

// TestUntilReadTimeoutBoundsWholeCall checks that the read timeout bounds
// an Until as a whole: a peer that trickles bytes without the delimiter
// (one every 40 ms) must not hold an Until with a 100 ms read timeout
// past it. Until used to start a fresh timeout at each of its waits, so
// every byte restarted the clock and the peer held the reader as long as
// it liked (a slow-loris hold; here 1 s, until the delimiter came).
func TestUntilReadTimeoutBoundsWholeCall(t *testing.T) {
	c, done := trickle(t, "x", "\n")
	c.SetReadTimeout(100 * time.Millisecond)
	start := time.Now()
	line, err := c.Reader().Until('\n')
	d := time.Since(start)
	c.Close()
	<-done
	if !netpoll.IsTimeout(err) || d > 500*time.Millisecond {
		t.Fatalf("Until with a 100 ms read timeout: %d bytes, err %v after %v; want a timeout after about 100 ms", len(line), err, d.Round(time.Millisecond))
	}
}

// TestNextReadTimeoutBoundsWholeCall checks the same of Next(n), whose n
// bytes arrive in pieces: one read, one timeout, however many pieces.
func TestNextReadTimeoutBoundsWholeCall(t *testing.T) {
	c, done := trickle(t, "x", "")
	c.SetReadTimeout(100 * time.Millisecond)
	start := time.Now()
	_, err := c.Reader().Next(25)
	d := time.Since(start)
	c.Close()
	<-done
	if !netpoll.IsTimeout(err) || d > 500*time.Millisecond {
		t.Fatalf("Next(25) with a 100 ms read timeout, a byte every 40 ms: err %v after %v; want a timeout after about 100 ms", err, d.Round(time.Millisecond))
	}
}
