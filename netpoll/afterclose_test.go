//go:build linux

package netpoll_test

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// within runs f and fails t if it does not return within 2 s.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("%s still blocked after 2s", what)
	}
}

// useClosed calls every method of a closed connection that has no input and
// fails t on a nil error, a panic or a hang.
func useClosed(t *testing.T, side string, c netpoll.Connection) {
	t.Helper()
	r, w := c.Reader(), c.Writer()
	wantErr := func(op string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: %s after Close: no error", side, op)
		}
	}
	within(t, side+" methods after Close", func() {
		_, err := c.Read(make([]byte, 4))
		wantErr("Read", err)
		_, err = c.Write([]byte("x"))
		wantErr("Write", err)
		_, err = r.Next(1)
		wantErr("Next", err)
		_, err = r.Peek(1)
		wantErr("Peek", err)
		wantErr("Skip", r.Skip(1))
		_, err = r.Until('\n')
		wantErr("Until", err)
		_, err = r.ReadByte()
		wantErr("ReadByte", err)
		_, err = r.ReadString(1)
		wantErr("ReadString", err)
		_, err = r.ReadBinary(1)
		wantErr("ReadBinary", err)
		_, err = r.Slice(1)
		wantErr("Slice", err)
		r.Release()
		r.Release()
		p, err := w.Malloc(8)
		if err == nil {
			copy(p, "12345678")
		}
		w.WriteBinary(make([]byte, 8192))
		w.WriteString("abc")
		wantErr("Flush", w.Flush())
		if w.MallocLen() != 0 {
			t.Errorf("%s: a failed Flush left %d bytes queued", side, w.MallocLen())
		}
		c.SetDeadline(time.Now().Add(time.Second))
		c.SetReadDeadline(time.Time{})
		c.SetWriteDeadline(time.Now())
		c.SetReadTimeout(time.Millisecond)
		c.SetWriteTimeout(time.Millisecond)
		c.SetIdleTimeout(time.Millisecond)
		if c.IsActive() {
			t.Errorf("%s: active after Close", side)
		}
		if err := c.Close(); err != nil {
			t.Errorf("%s: second Close: %v", side, err)
		}
	})
}

// TestMethodsAfterClose: every method of a connection closed locally
// returns (with an error where there is one to give), on both sides.
func TestMethodsAfterClose(t *testing.T) {
	c, sc, _, _ := silentPair(t)
	c.Close()
	useClosed(t, "dialed", c)
	sc.Close()
	useClosed(t, "accepted", sc)
}

// TestConcurrentClose: Close from several goroutines at once, while a read
// and a Flush (of more than the socket holds) wait, ends both with
// ErrConnClosed and runs each close callback exactly once.
func TestConcurrentClose(t *testing.T) {
	for range 10 {
		c, _ := netpoll.DialTCP(t) // the peer never reads nor writes
		var first, second atomic.Int32
		c.AddCloseCallback(func(netpoll.Connection) error { first.Add(1); return nil })
		c.AddCloseCallback(func(netpoll.Connection) error { second.Add(1); return nil })
		readErr := make(chan error, 1)
		go func() {
			_, err := c.Reader().Next(1)
			readErr <- err
		}()
		flushErr := make(chan error, 1)
		go func() {
			c.Writer().Malloc(32 << 20)
			flushErr <- c.Writer().Flush()
		}()
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				c.Close()
			}()
		}
		close(start)
		within(t, "concurrent Close", wg.Wait)
		within(t, "read and Flush during Close", func() {
			if err := <-readErr; !errors.Is(err, netpoll.ErrConnClosed) {
				t.Errorf("read waiting during Close: %v, want ErrConnClosed", err)
			}
			if err := <-flushErr; !errors.Is(err, netpoll.ErrConnClosed) {
				t.Errorf("Flush waiting during Close: %v, want ErrConnClosed", err)
			}
		})
		if first.Load() != 1 || second.Load() != 1 {
			t.Fatalf("close callbacks ran %d and %d times, want once each", first.Load(), second.Load())
		}
	}
}

// TestCloseCallbacksOfConnectionNotServed: a close callback added in
// OnPrepare runs when the connection is then not served because OnPrepare
// panicked or called runtime.Goexit (the connection is closed, so its
// callbacks are due).
func TestCloseCallbacksOfConnectionNotServed(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func()
	}{
		{"panic", func() { panic("prepare") }},
		{"Goexit", runtime.Goexit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := make(chan struct{}, 1)
			_, addr := serve(t, netpoll.Config{
				OnRequest: echo,
				OnPrepare: func(c netpoll.Connection) context.Context {
					c.AddCloseCallback(func(netpoll.Connection) error { ran <- struct{}{}; return nil })
					tc.fail()
					return context.Background()
				},
			})
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := c.Read(make([]byte, 1)); err == nil || os.IsTimeout(err) {
				t.Fatalf("read: %v, want the connection closed", err)
			}
			// The fd is closed after notServed has run: the callback has
			// had its chance by now.
			select {
			case <-ran:
			default:
				t.Fatal("the close callback did not run")
			}
		})
	}
}

// TestReadDeadlineExtendedOrClearedWhileWaiting: a read deadline moved later,
// or cleared, while a read waits no longer ends that read at the old
// deadline; the read returns the bytes that come after it.
func TestReadDeadlineExtendedOrClearedWhileWaiting(t *testing.T) {
	for _, later := range []time.Time{time.Now().Add(time.Hour), {}} {
		c, s := netpoll.DialTCP(t)
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		res := make(chan error, 1)
		go func() {
			_, err := c.Reader().Next(1)
			res <- err
		}()
		c.SetReadDeadline(later)
		time.Sleep(150 * time.Millisecond) // past the old deadline
		select {
		case err := <-res:
			t.Fatalf("deadline moved to %v: the read ended at the old one: %v", later, err)
		default:
		}
		s.Write([]byte("x"))
		within(t, "read after the peer wrote", func() {
			if err := <-res; err != nil {
				t.Errorf("deadline moved to %v: read: %v", later, err)
			}
		})
	}
}
