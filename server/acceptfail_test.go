//go:build linux

package server_test

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// stuckEcho is a handler whose "block" action waits for release.
type stuckEcho struct {
	handler
	started chan struct{}
	release chan struct{}
}

func (h *stuckEcho) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	if req.Action == "block" {
		h.started <- struct{}{}
		<-h.release
		return &echotest.Response{Msg: "released"}, nil
	}
	return h.handler.Echo(ctx, req)
}

// TestServeAcceptFailureIsBounded: when the listener fails for good (here
// shut down under the server, so that accept says EINVAL), Serve returns
// an error naming the address and the accept error within the exit wait
// time, as Stop would, even while a handler is stuck: it used to wait for
// every handler and connection without bound. Requests arriving meanwhile
// on open connections are refused as shutting down.
func TestServeAcceptFailureIsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	h := &stuckEcho{started: make(chan struct{}, 1), release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(h.release)
		}
	}()
	s := server.New(server.WithExitWaitTime(300 * time.Millisecond))
	if err := s.RegisterService(echotest.EchoServiceInfo, h); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	stuck := dial(t, addr, transport.TTHeader)
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "block"}}
	if err := stuck.send("echo", thrift.CALL, 1, args, nil); err != nil {
		t.Fatal(err)
	}
	<-h.started
	other := dial(t, addr, transport.Framed)
	other.call(1, "echo", "before", nil)

	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Control(func(fd uintptr) { err = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !s.Draining() {
		if time.Now().After(deadline) {
			t.Fatal("the server was not draining 5 s after its listener failed")
		}
		time.Sleep(time.Millisecond)
	}
	if _, rep := other.call(2, "echo", "after", nil); rep.ex == nil || !strings.Contains(rep.ex.Message, "shutting down") {
		t.Fatalf("a request after the listener failed: %+v %+v, want it refused as shutting down", rep, rep.ex)
	}
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "accept") {
			t.Fatalf("Serve returned %v, want an error naming %s and the accept failure", err, addr)
		}
	case <-timer.C:
		t.Fatal("Serve had not returned 5 s after its listener failed (exit wait 300 ms): it waits for the stuck handler")
	}
	close(h.release)
	released = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop after Serve failed: %v", err)
	}
}
