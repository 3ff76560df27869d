//go:build linux

package netpoll

import (
	"context"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestShutdownDuringRegister: a connection accepted but not yet registered
// with a poller (register held up) is not closed by Shutdown, which used to
// close it and dereference its nil poller; Shutdown waits for it, and once
// registered it finds the loop closed and is closed.
func TestShutdownDuringRegister(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	loop, err := NewEventLoop(Config{OnRequest: func(context.Context, Connection) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- loop.Serve(ln) }()
	for {
		loop.mu.Lock()
		n := len(loop.listeners)
		loop.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	defaultManager.mu.Lock() // holds register, where the poller accepts
	locked := true
	defer func() {
		if locked {
			defaultManager.mu.Unlock()
		}
	}()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	time.Sleep(50 * time.Millisecond) // accepted, waiting in register
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- loop.Shutdown(ctx) }()
	wait := time.NewTimer(100 * time.Millisecond)
	defer wait.Stop()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a connection being accepted", err)
	case <-wait.C:
	}
	locked = false
	defaultManager.mu.Unlock()
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	<-done
	cl.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := cl.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("connection accepted during Shutdown: %v, want EOF", err)
	}
}

// TestServeFreesPortOnReturn: once Shutdown and Serve have returned, the
// address can be listened on again at once (a server restarting in the same
// process). The poller's duplicate of the listening socket, closed after
// its next batch, kept it listening for a few milliseconds: about 7% of
// restarts failed with "address already in use".
func TestServeFreesPortOnReturn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	for i := range 200 {
		loop, err := NewEventLoop(Config{OnRequest: func(context.Context, Connection) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- loop.Serve(ln) }()
		c, err := net.Dial("tcp", addr) // served: the listener is registered
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if err := loop.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			t.Fatalf("round %d: listening again on %s after Serve returned: %v", i, addr, err)
		}
	}
	ln.Close()
}

// TestAcceptRetriesConnectionErrors: accept(2) hands a connection's pending
// network error (and, on Linux, a firewall's refusal) to accept itself;
// those are the one connection's, gone already, and must not end the
// listener as a failure of its own does.
func TestAcceptRetriesConnectionErrors(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ECONNABORTED, syscall.EPROTO, syscall.ENETDOWN, syscall.ENOPROTOOPT,
		syscall.EHOSTDOWN, syscall.EHOSTUNREACH, syscall.EOPNOTSUPP, syscall.ENETUNREACH, syscall.EPERM} {
		if !acceptSkips(errno) {
			t.Errorf("accept error %v ends the listener; accept(2) says to retry it", errno)
		}
	}
	for _, errno := range []syscall.Errno{syscall.EBADF, syscall.EINVAL, syscall.ENOTSOCK, syscall.EFAULT} {
		if acceptSkips(errno) {
			t.Errorf("accept error %v (the listener's own) is retried for ever", errno)
		}
	}
}
