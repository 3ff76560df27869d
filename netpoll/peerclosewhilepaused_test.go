//go:build linux

package netpoll_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// eventually waits up to 2 s for cond.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestPeerCloseRecordedWhileReadingPaused checks that the peer's close is
// recorded at once when it comes while the connection's input is at the
// input cap (reading paused): IsActive turns false, and OnDisconnect runs
// while the handler still holds the input, as for any peer close; and
// that nothing the peer sent before closing is lost. The poller used to
// stop watching the socket while paused (or take it out of the kernel's
// set when the close came with the input at the cap), so the close was
// recorded only once the reader had read the input down: a pool checking
// IsActive handed out a connection whose peer had long gone.
func TestPeerCloseRecordedWhileReadingPaused(t *testing.T) {
	t.Run("dialed", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		// Past the 4 MiB cap, by less than the socket's receive buffer, so
		// that the peer's close (which follows its data) reaches it.
		sent := bytes.Repeat([]byte("0123456789abcdef"), (4<<20+16<<10)/16)
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			s, err := ln.Accept()
			if err != nil {
				return
			}
			s.Write(sent)
			s.Close()
		}()
		c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		tm := time.NewTimer(5 * time.Second)
		defer tm.Stop()
		select {
		case <-closed:
		case <-tm.C:
			t.Fatal("the peer could not write its reply")
		}
		if !eventually(func() bool { return !c.IsActive() }) {
			t.Fatalf("IsActive() still true 2 s after the peer closed (input %d bytes, at the cap)", c.Reader().Len())
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil || !bytes.Equal(got, sent) {
			t.Fatalf("read after the peer's close: %d of %d bytes, equal %v, err %v", len(got), len(sent), bytes.Equal(got, sent), err)
		}
	})

	t.Run("served", func(t *testing.T) {
		// The rest past the cap fits in the socket's receive buffer, so
		// that the peer's close (which follows its data) reaches it.
		const size, inputCap = 32 << 10, 4096
		release := make(chan struct{})
		entered := make(chan struct{}, 1)
		disconnected := make(chan struct{})
		var served atomic.Int64
		var conn atomic.Value
		_, addr := serve(t, netpoll.Config{
			InputCap: inputCap,
			OnRequest: func(_ context.Context, c netpoll.Connection) error {
				conn.Store(c)
				select {
				case entered <- struct{}{}:
				default:
				}
				<-release
				r := c.Reader()
				n := r.Len()
				if err := r.Skip(n); err != nil {
					return err
				}
				served.Add(int64(n))
				return r.Release()
			},
			OnDisconnect: func(context.Context, netpoll.Connection) { close(disconnected) },
		})
		cl, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Write(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		<-entered
		time.Sleep(50 * time.Millisecond) // read up to the cap, then paused
		cl.Close()
		tm := time.NewTimer(2 * time.Second)
		defer tm.Stop()
		select {
		case <-disconnected:
		case <-tm.C:
			close(release)
			t.Fatal("no OnDisconnect 2 s after the peer closed, while the handler held the input at the cap")
		}
		if c := conn.Load().(netpoll.Connection); c.IsActive() {
			close(release)
			t.Fatal("IsActive() true after OnDisconnect")
		}
		close(release)
		if !eventually(func() bool { return served.Load() == size }) {
			t.Fatalf("served %d of the %d bytes sent before the peer closed", served.Load(), size)
		}
	})
}
