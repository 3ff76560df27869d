package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// gatedEcho blocks "wait" calls until a "release" call arrives.
type gatedEcho struct {
	handler
	once sync.Once
	ch   chan struct{}
}

func (g *gatedEcho) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	switch req.Action {
	case "wait":
		<-g.ch
	case "release":
		g.once.Do(func() { close(g.ch) })
	}
	return &echotest.Response{Msg: req.Action}, nil
}

// TestConnectionsReadWhileHandlerPoolIsFull checks that connections are
// still read, accepted and disconnected while more TTHeader handlers block
// than the handler pool has goroutines (10,000; no WithMaxInFlight). The
// readers used to run on the same pool as the handlers: queued behind the
// blocked handlers, no request was read any more (not even the one that
// would unblock them), a new connection was never served and OnDisconnect
// never ran, so the server hung.
func TestConnectionsReadWhileHandlerPoolIsFull(t *testing.T) {
	g := &gatedEcho{ch: make(chan struct{})}
	s, addr := startWith(t, server.New(), g)
	// Registered after startWith, so it runs before its Stop.
	t.Cleanup(func() { g.once.Do(func() { close(g.ch) }) })
	const conns, per = 10, 1001 // 10010 handlers blocked; under 1024 a connection
	for i := 0; i < conns; i++ {
		c := dial(t, addr, transport.TTHeader)
		w := c.conn.Writer()
		for j := 0; j < per; j++ {
			args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "wait"}}
			if err := transport.WriteMessage(w, transport.TTHeader, &transport.Header{Protocol: transport.TTHeader}, "echo", thrift.CALL, int32(j), args); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if got := waitStat(func() int64 { return s.Stats().InFlight }, conns*per); got != conns*per {
		t.Fatalf("%d requests in flight, want %d", got, conns*per)
	}

	// A connection opened and closed now is closed by the server too (its
	// place in the limiter given back as it closes).
	closed := dial(t, addr, transport.TTHeader)
	if got := waitStat(func() int64 { return s.Stats().Connections }, conns+1); got != conns+1 {
		t.Fatalf("%d connections open, want %d", got, conns+1)
	}
	closed.conn.Close()
	if got := waitStat(func() int64 { return s.Stats().Connections }, conns); got != conns {
		t.Fatalf("%d connections open after one closed, want %d: the server did not close it", got, conns)
	}

	// A request on a new connection is read and answered: one refused by
	// the reader itself (an unknown method) and, on a Framed connection,
	// whose requests the reader serves itself, one that releases the
	// blocked handlers. (A TTHeader request's handler would wait for the
	// handler pool, in order.)
	c := dial(t, addr, transport.TTHeader)
	c.conn.SetReadTimeout(3 * time.Second)
	if err := c.send("nosuch", thrift.CALL, 1, &echotest.EchoEchoArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	if rep, err := c.recv(nil); err != nil || rep.typ != thrift.EXCEPTION {
		t.Fatalf("a request for an unknown method on a new connection: reply %+v, %v; want an exception within 3 s while %d handlers wait", rep, err, conns*per)
	}
	f := dial(t, addr, transport.Framed)
	f.conn.SetReadTimeout(3 * time.Second)
	if err := f.send("echo", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "release"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.recv(new(echotest.EchoEchoResult)); err != nil {
		t.Fatalf("a Framed request on a new connection was not answered within 3 s while %d handlers wait: %v", conns*per, err)
	}
	if got := waitStat(func() int64 { return s.Stats().InFlight }, 0); got != 0 {
		t.Fatalf("%d requests in flight after the release, want 0", got)
	}
}
