//go:build linux

package netpoll

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestWatcherAcceptedConnIsServed: a connection ln's watcher accepts
// (racing the poller for it) is served like the poller's.
func TestWatcherAcceptedConnIsServed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	loop, err := NewEventLoop(Config{OnRequest: func(_ context.Context, c Connection) error {
		p, err := c.Reader().Next(c.Reader().Len())
		if err != nil {
			return err
		}
		c.Writer().WriteBinary(append([]byte(nil), p...))
		return c.Writer().Flush()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Shutdown(context.Background())
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	x := &listener{loop: loop, ln: ln}
	x.adopt(nc, &backoffWait{})
	cl.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := cl.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := cl.Read(got); err != nil || string(got) != "ping" {
		t.Fatalf("echo on an adopted connection: %q, %v", got, err)
	}
}

// TestWatcherClosesConnWithoutFD: every listener is watched through its own
// Accept, so a wrapper's Accept may return a connection that is not a
// syscall.Conn (one wrapped for metrics). It has no fd to poll: it is
// closed, and the watcher goes on, where an unchecked type assertion
// crashed the process.
func TestWatcherClosesConnWithoutFD(t *testing.T) {
	type wrappedConn struct{ net.Conn }
	a, b := net.Pipe()
	defer b.Close()
	x := &listener{}
	x.adopt(wrappedConn{a}, &backoffWait{})
	b.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := b.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the peer of a connection without an fd read %v, want io.EOF (closed)", err)
	}
}
