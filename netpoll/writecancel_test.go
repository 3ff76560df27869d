//go:build linux || darwin || freebsd

package netpoll

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// bigWrite is far more than the socket buffers of a peer that does not
// read hold, so that a Flush of it waits for room.
const bigWrite = 32 << 20

// waitForFlush polls until a Flush of c waits for room in the socket.
func waitForFlush(t *testing.T, c *connection, what string) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !c.wwaiting.Load(); {
		if time.Now().After(end) {
			t.Fatalf("%s: no Flush waited for room within 5 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// drainPeer reads s until it closes (or 5 s pass) and returns the count.
func drainPeer(s net.Conn) <-chan int64 {
	got := make(chan int64, 1)
	go func() {
		s.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _ := io.Copy(io.Discard, s)
		got <- n
	}()
	return got
}

// TestWriteCancelEndsWaitingFlush: a Flush (and a Write) waiting for room
// in the socket of a peer that does not read ends with ErrWriteCanceled
// once the channel given to SetWriteCancel closes, with a write timeout
// armed or not; the error says how much went out, Write's count matches
// what the peer got, and the connection stays open.
func TestWriteCancelEndsWaitingFlush(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Hour} {
		for _, viaWrite := range []bool{false, true} {
			what := "Flush"
			if viaWrite {
				what = "Write"
			}
			if timeout > 0 {
				what += " with a write timeout"
			}
			c, s := dialPair(t)
			if err := c.SetWriteTimeout(timeout); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			c.SetWriteCancel(done)
			type result struct {
				n   int
				err error
			}
			res := make(chan result, 1)
			go func() {
				p := make([]byte, bigWrite)
				if viaWrite {
					n, err := c.Write(p)
					res <- result{n, err}
					return
				}
				if _, err := c.WriteBinary(p); err != nil {
					res <- result{0, err}
					return
				}
				res <- result{-1, c.Flush()}
			}()
			waitForFlush(t, c, what)
			start := time.Now()
			close(done)
			tm := time.NewTimer(2 * time.Second)
			var r result
			select {
			case r = <-res:
				tm.Stop()
			case <-tm.C:
				t.Fatalf("%s: still waits 2s after its cancel channel closed", what)
			}
			if !errors.Is(r.err, ErrWriteCanceled) {
				t.Fatalf("%s: the canceled write returned %v, want ErrWriteCanceled", what, r.err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s: ended %v after the cancel", what, d)
			}
			if !strings.Contains(r.err.Error(), "bytes") {
				t.Errorf("%s: the error %q does not say how much went out", what, r.err)
			}
			if !c.IsActive() {
				t.Fatalf("%s: the connection closed after a canceled write", what)
			}
			if c.MallocLen() != 0 || c.out.Len() != 0 {
				t.Errorf("%s: the canceled write left output queued (%d, %d bytes)", what, c.MallocLen(), c.out.Len())
			}
			c.Close()
			k := <-drainPeer(s)
			if viaWrite && int64(r.n) != k {
				t.Errorf("%s: returned n %d, but the peer got %d bytes", what, r.n, k)
			}
			if k == 0 || k >= bigWrite {
				t.Errorf("%s: the peer got %d of %d bytes; the test needs a write cut short", what, k, bigWrite)
			}
		}
	}
}

// TestWriteCancelClosedBefore: with a closed channel, a Flush the socket
// takes at once succeeds, and one that would wait fails at once.
func TestWriteCancelClosedBefore(t *testing.T) {
	c, s := dialPair(t)
	got := drainPeer(s)
	done := make(chan struct{})
	close(done)
	c.SetWriteCancel(done)
	if _, err := c.Write([]byte("small")); err != nil {
		t.Fatalf("a small Write with a closed cancel channel: %v", err)
	}
	c2, s2 := dialPair(t)
	defer s2.Close()
	c2.SetWriteCancel(done)
	res := make(chan error, 1)
	go func() {
		_, err := c2.Write(make([]byte, bigWrite))
		res <- err
	}()
	tm := time.NewTimer(2 * time.Second)
	defer tm.Stop()
	select {
	case err := <-res:
		if !errors.Is(err, ErrWriteCanceled) {
			t.Fatalf("a Write that must wait, with a closed cancel channel, returned %v; want ErrWriteCanceled", err)
		}
	case <-tm.C:
		t.Fatal("a Write that must wait, with a closed cancel channel, still waits after 2 s")
	}
	c.Close()
	if n := <-got; n != int64(len("small")) {
		t.Errorf("the peer got %d bytes, want 5", n)
	}
	c2.Close()
}

// TestWriteCancelNilWaits: a nil channel (and a cleared one) leaves a
// Flush waiting for room as before: it completes once the peer reads.
func TestWriteCancelNilWaits(t *testing.T) {
	c, s := dialPair(t)
	done := make(chan struct{})
	c.SetWriteCancel(done)
	c.SetWriteCancel(nil)
	close(done)
	res := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, bigWrite))
		res <- err
	}()
	waitForFlush(t, c, "Write")
	quiet := time.NewTimer(50 * time.Millisecond)
	select {
	case err := <-res:
		t.Fatalf("a Write with its cancel channel cleared ended with %v before the peer read", err)
	case <-quiet.C:
	}
	got := drainPeer(s)
	tm := time.NewTimer(10 * time.Second)
	defer tm.Stop()
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("the Write, once the peer read: %v", err)
		}
	case <-tm.C:
		t.Fatal("the Write did not end within 10 s of the peer reading")
	}
	c.Close()
	if n := <-got; n != bigWrite {
		t.Fatalf("the peer got %d bytes, want %d", n, bigWrite)
	}
}

// TestWriteCancelPublic: the Connection interface offers SetWriteCancel,
// and its error says what happened.
func TestWriteCancelPublic(t *testing.T) {
	var c Connection
	c, s := dialPair(t)
	defer s.Close()
	done := make(chan struct{})
	close(done)
	c.SetWriteCancel(done)
	w := c.Writer()
	if _, err := w.WriteBinary(make([]byte, bigWrite)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); !errors.Is(err, ErrWriteCanceled) {
		t.Fatalf("Flush of %d bytes with a closed cancel channel returned %v, want ErrWriteCanceled", bigWrite, err)
	}
	if msg := ErrWriteCanceled.Error(); !strings.Contains(msg, "write canceled") {
		t.Fatalf("ErrWriteCanceled says %q, which does not say the write was canceled", msg)
	}
}
