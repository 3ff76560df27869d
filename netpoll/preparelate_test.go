//go:build linux

package netpoll_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestShutdownWaitsForOnPrepare: a connection whose OnPrepare is running
// when Shutdown begins is not yet among the loop's connections. Shutdown
// must still wait for it: its OnPrepare, and the OnDisconnect that follows
// for a connection refused, may not run after Shutdown has returned (a
// server's state they touch is gone by then).
func TestShutdownWaitsForOnPrepare(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	release := make(chan struct{})
	var prepared, disconnected atomic.Int32
	loop, err := netpoll.NewEventLoop(netpoll.Config{
		OnRequest: func(ctx context.Context, c netpoll.Connection) error { return nil },
		OnPrepare: func(c netpoll.Connection) context.Context {
			if prepared.Add(1) == 1 {
				close(entered)
				<-release
			}
			return context.Background()
		},
		OnDisconnect: func(ctx context.Context, c netpoll.Connection) { disconnected.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- loop.Serve(ln) }()
	p, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	limit := time.NewTimer(5 * time.Second)
	defer limit.Stop()
	select {
	case <-entered:
	case <-limit.C:
		t.Fatal("OnPrepare not called")
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shut <- loop.Shutdown(ctx)
	}()
	wait := time.NewTimer(200 * time.Millisecond)
	defer wait.Stop()
	select {
	case err := <-shut:
		close(release)
		t.Fatalf("Shutdown returned (%v) while OnPrepare was running", err)
	case <-wait.C:
	}
	close(release)
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-limit.C:
		t.Fatal("Shutdown did not return once OnPrepare did")
	}
	if n := disconnected.Load(); n != 1 {
		t.Errorf("OnDisconnect ran %d times by Shutdown's return, want 1 (OnPrepare ran)", n)
	}
	<-served
	if n := prepared.Load(); n != 1 {
		t.Errorf("OnPrepare ran %d times, want 1", n)
	}
}
