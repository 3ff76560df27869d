package server_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// countingBlocker's Echo counts itself running and blocks until release is
// closed.
type countingBlocker struct {
	running atomic.Int64
	release chan struct{}
}

func (b *countingBlocker) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	b.running.Add(1)
	<-b.release
	return &echotest.Response{}, nil
}

func (b *countingBlocker) Notify(ctx context.Context, msg string) error { return nil }

// TestHalfClosedConnectionsStayCounted: a connection whose peer shut down
// its sending side keeps its place in WithMaxConnections' count while the
// server still holds it open and serves it (its handler runs, its reply is
// still written). The place was given back at the peer's close, so a
// client that sent a request and half-closed, again and again, made the
// server hold any number of connections past the limit, and
// Stats().Connections said 0.
func TestHalfClosedConnectionsStayCounted(t *testing.T) {
	const limit, n = 2, 10
	impl := &countingBlocker{release: make(chan struct{})}
	s, addr := startWith(t, server.New(server.WithMaxConnections(limit)), impl)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	released := false
	defer func() {
		if !released {
			close(impl.release)
		}
	}()
	req := requestBytes(t, transport.TTHeader, 1, "hi")
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		c.(*net.TCPConn).CloseWrite() // the client still reads its reply
		if i < limit {
			// Its handler runs: the connection holds a place.
			waitStat(func() int64 { return impl.running.Load() }, int64(i+1))
		}
	}
	// The connections past the limit were refused: no handler of theirs
	// starts (a moment for one that would).
	time.Sleep(100 * time.Millisecond)
	st := s.Stats()
	if st.Connections > limit {
		t.Errorf("Stats().Connections = %d, over WithMaxConnections(%d)", st.Connections, limit)
	}
	t.Logf("handlers running on distinct connections: %d; Stats: Connections %d, RejectedConnections %d",
		impl.running.Load(), st.Connections, st.RejectedConnections)
	// Every one of those connections is still open and served: its reply
	// comes once the handler returns.
	close(impl.release)
	released = true
	replied := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		b := make([]byte, 256)
		if k, _ := c.Read(b); k > 0 {
			replied++
		}
	}
	t.Logf("connections answered after the release: %d", replied)
	if replied != limit {
		t.Errorf("%d connections answered, want the %d within the limit", replied, limit)
	}
	if got := impl.running.Load(); got > limit {
		t.Fatalf("with WithMaxConnections(%d) the server held %d connections open at once (each serving a call, %d answered later); Stats().Connections = %d, RejectedConnections = %d",
			limit, got, replied, st.Connections, st.RejectedConnections)
	}
}
