//go:build linux

package netpoll_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// wrappedListener is a common listener wrapper (a keep-alive setting,
// metrics): it embeds *net.TCPListener, so it is a syscall.Conn and Serve
// takes it, and it wraps the connections it accepts, which are then no
// syscall.Conn.
type wrappedListener struct{ *net.TCPListener }

type wrappedConn struct{ net.Conn }

func (l wrappedListener) Accept() (net.Conn, error) {
	c, err := l.TCPListener.Accept()
	if err != nil {
		return nil, err
	}
	return wrappedConn{c}, nil
}

// TestServeEndsWhenListenerClosed: a listener its user closes (not through
// Shutdown) ends Serve, with an error saying so, as net/http's Serve does;
// from then on nothing listens on its address. Serve listened on a
// duplicate of the listener's fd, so it went on accepting, and serving,
// after the Close and never returned. So it did for a listener wrapping a
// *net.TCPListener ("wrapped"), which Serve took but did not watch; a first
// fix watched it through its Accept, which then took most connections from
// the poller and, getting wrapped ones with no fd, dropped them: each of
// the connections made first must be served.
func TestServeEndsWhenListenerClosed(t *testing.T) {
	for _, name := range []string{"tcp", "unix", "wrapped"} {
		t.Run(name, func(t *testing.T) {
			network, addr := name, "127.0.0.1:0"
			switch name {
			case "unix":
				addr = filepath.Join(t.TempDir(), "s")
			case "wrapped":
				network = "tcp"
			}
			var ln net.Listener
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			if name == "wrapped" {
				ln = wrappedListener{ln.(*net.TCPListener)}
			}
			addr = ln.Addr().String()
			loop, err := netpoll.NewEventLoop(netpoll.Config{OnRequest: echo})
			if err != nil {
				t.Fatal(err)
			}
			defer loop.Shutdown(context.Background())
			done := make(chan error, 1)
			go func() { done <- loop.Serve(ln) }()
			for i := range 20 {
				c, err := net.Dial(network, addr)
				if err != nil {
					t.Fatal(err)
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				c.Write([]byte("x"))
				if _, err := c.Read(make([]byte, 1)); err != nil {
					t.Fatalf("connection %d, before the close: %v", i, err)
				}
				c.Close()
			}
			c, err := net.Dial(network, addr) // served once this is echoed
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Read(make([]byte, 1)); err != nil {
				t.Fatalf("echo before the close: %v", err)
			}

			ln.Close()
			timer := time.NewTimer(5 * time.Second)
			defer timer.Stop()
			select {
			case err := <-done:
				if err == nil || !errors.Is(err, net.ErrClosed) {
					t.Fatalf("Serve after its listener was closed returned %v, want an error wrapping net.ErrClosed", err)
				}
				t.Logf("Serve: %v", err)
			case <-timer.C:
				t.Fatalf("Serve did not return within 5s of its listener being closed")
			}
			if d, err := net.DialTimeout(network, addr, time.Second); err == nil {
				d.Close()
				t.Fatalf("dial of %s after its listener was closed and Serve returned succeeded", addr)
			}
			// The connection already open is still served.
			if _, err := c.Write([]byte("y")); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Read(make([]byte, 1)); err != nil {
				t.Fatalf("echo on an open connection after the listener closed: %v", err)
			}
		})
	}
}
