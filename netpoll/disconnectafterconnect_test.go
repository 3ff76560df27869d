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

type sessionKey struct{}

// TestOnDisconnectWaitsForOnConnect checks that OnDisconnect runs only
// after OnConnect has returned, with the context OnConnect returned, when
// the connection stops being active while OnConnect runs: the peer closes
// it, or OnConnect closes it itself. OnDisconnect used to run at once, at
// the same time as OnConnect and with the context from before it, so that
// the per-connection state OnConnect set up (a session, a metric's labels)
// was not there to tear down.
func TestOnDisconnectWaitsForOnConnect(t *testing.T) {
	for _, tc := range []struct {
		name      string
		peerClose bool
	}{
		{"peer closes", true},
		{"OnConnect closes", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var connectReturned atomic.Bool
			type result struct {
				early bool
				val   any
			}
			got := make(chan result, 2)
			peerGone := make(chan struct{})
			_, addr := serve(t, netpoll.Config{
				OnRequest: func(ctx context.Context, c netpoll.Connection) error { return nil },
				OnConnect: func(ctx context.Context, c netpoll.Connection) context.Context {
					if tc.peerClose {
						<-peerGone
						time.Sleep(50 * time.Millisecond) // the poller sees the close meanwhile
					} else {
						c.Close()
						time.Sleep(50 * time.Millisecond)
					}
					ctx = context.WithValue(ctx, sessionKey{}, "session")
					connectReturned.Store(true)
					return ctx
				},
				OnDisconnect: func(ctx context.Context, c netpoll.Connection) {
					got <- result{!connectReturned.Load(), ctx.Value(sessionKey{})}
				},
			})
			cl, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			if tc.peerClose {
				cl.Close()
				close(peerGone)
			} else {
				defer cl.Close()
			}
			tm := time.NewTimer(5 * time.Second)
			defer tm.Stop()
			select {
			case r := <-got:
				if r.early || r.val != "session" {
					t.Fatalf("OnDisconnect ran before OnConnect returned: %v; its context's value: %v, want \"session\"", r.early, r.val)
				}
			case <-tm.C:
				t.Fatal("no OnDisconnect")
			}
		})
	}
}

// TestShutdownWaitsForDeferredOnDisconnect: the OnDisconnect of a
// connection closed while OnConnect runs, deferred until OnConnect returns,
// runs before Shutdown returns. The close forgets the connection, so
// Shutdown does not wait for it; the deferred OnDisconnect was handed to
// the loop's pool once OnConnect returned, when Shutdown had closed it, and
// ran on a goroutine of its own after Shutdown had returned. It now runs on
// OnConnect's pool goroutine, which Shutdown waits for.
func TestShutdownWaitsForDeferredOnDisconnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inConnect := make(chan struct{})
	var disconnected atomic.Bool
	loop, err := netpoll.NewEventLoop(netpoll.Config{
		OnRequest: func(ctx context.Context, c netpoll.Connection) error { return nil },
		OnConnect: func(ctx context.Context, c netpoll.Connection) context.Context {
			c.Close() // e.g. a connection refused by a limit
			close(inConnect)
			time.Sleep(100 * time.Millisecond)
			return ctx
		},
		OnDisconnect: func(ctx context.Context, c netpoll.Connection) {
			time.Sleep(20 * time.Millisecond)
			disconnected.Store(true)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- loop.Serve(ln) }()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	<-inConnect
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := loop.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if !disconnected.Load() {
		t.Errorf("Shutdown (its context not ended) returned before the connection's OnDisconnect ran: it runs on a goroutine outside the loop's pool")
	}
	<-served
}
