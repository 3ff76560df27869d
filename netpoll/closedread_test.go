//go:build linux

package netpoll_test

import (
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// waitLen polls until c has n bytes of input, failing t after 2 s.
func waitLen(t *testing.T, c netpoll.Connection, n int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); c.Reader().Len() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("input: %d bytes after 2s, want %d", c.Reader().Len(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReadAfterLocalCloseFails: once a dialed connection is closed locally,
// its reads fail with ErrConnClosed, as a net.Conn's do, even with input
// buffered (before or after the peer closed too).
func TestReadAfterLocalCloseFails(t *testing.T) {
	for _, peerClosed := range []bool{false, true} {
		c, s := netpoll.DialTCP(t)
		s.Write([]byte("hello"))
		if peerClosed {
			s.Close()
			for deadline := time.Now().Add(2 * time.Second); c.IsActive(); {
				if time.Now().After(deadline) {
					t.Fatal("peer's close not seen after 2s")
				}
				time.Sleep(time.Millisecond)
			}
		}
		waitLen(t, c, 5)
		c.Close()
		r := c.Reader()
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, netpoll.ErrConnClosed) {
			t.Errorf("peer closed %v: Read after Close: %v, want ErrConnClosed", peerClosed, err)
		}
		if _, err := r.Next(1); !errors.Is(err, netpoll.ErrConnClosed) {
			t.Errorf("peer closed %v: Next after Close: %v, want ErrConnClosed", peerClosed, err)
		}
		if _, err := r.Peek(1); !errors.Is(err, netpoll.ErrConnClosed) {
			t.Errorf("peer closed %v: Peek after Close: %v, want ErrConnClosed", peerClosed, err)
		}
		if _, err := r.Until('o'); !errors.Is(err, netpoll.ErrConnClosed) {
			t.Errorf("peer closed %v: Until after Close: %v, want ErrConnClosed", peerClosed, err)
		}
		if err := r.Release(); err != nil {
			t.Errorf("peer closed %v: Release after Close: %v", peerClosed, err)
		}
	}
}
