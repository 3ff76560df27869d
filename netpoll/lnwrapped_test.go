//go:build linux

package netpoll_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// wrappedListener is a common listener wrapper (a keep-alive setting,
// metrics): it embeds *net.TCPListener, so it is a syscall.Conn and Serve
// takes it.
type wrappedListener struct{ *net.TCPListener }

// TestServeEndsWhenWrappedListenerClosed: Serve's doc says that closing ln
// (not through Shutdown) ends accepting and Serve returns an error. Serve
// took a listener that embeds *net.TCPListener without error, but did not
// watch it for the close: after ln.Close the poller went on accepting (and
// serving) from its duplicate fd, and Serve never returned. Every listener
// is now watched through its own Accept.
func TestServeEndsWhenWrappedListenerClosed(t *testing.T) {
	tl, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	ln := wrappedListener{tl}
	addr := ln.Addr().String()
	loop, err := netpoll.NewEventLoop(netpoll.Config{OnRequest: echo})
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Shutdown(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Serve(ln) }()
	c, err := net.Dial("tcp", addr) // served once this is echoed
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
	if d, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		d.Close()
		t.Fatalf("dial of %s after its listener was closed and Serve returned succeeded", addr)
	}
}
