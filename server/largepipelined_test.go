package server_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// rendezvousEcho: a request whose Msg starts with "wait" blocks until a
// request "go" arrives (a long poll released by another call).
type rendezvousEcho struct {
	once sync.Once
	gate chan struct{}
}

func (e *rendezvousEcho) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	if req.Msg == "go" {
		e.once.Do(func() { close(e.gate) })
		return &echotest.Response{}, nil
	}
	select {
	case <-e.gate:
	case <-time.After(20 * time.Second):
	}
	return &echotest.Response{}, nil
}

func (e *rendezvousEcho) Notify(ctx context.Context, msg string) error { return nil }

// TestLargePipelinedCallsServedConcurrently: three pipelined 12 MiB
// requests (under the default WithMaxMessageSize) whose handlers wait for
// a fourth, small request on the same connection are all served on the
// pool, and the fourth is read. A bound of 32 MiB on a connection's calls
// in flight served the third on the reader, which then read nothing more:
// a deadlock.
func TestLargePipelinedCallsServedConcurrently(t *testing.T) {
	impl := &rendezvousEcho{gate: make(chan struct{})}
	_, addr := startWith(t, server.New(), impl)
	defer impl.once.Do(func() { close(impl.gate) })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		for i := int32(1); i <= 3; i++ {
			if _, err := c.Write(requestBytes(t, transport.TTHeader, i, "wait"+strings.Repeat("x", 12<<20))); err != nil {
				return
			}
		}
		c.Write(requestBytes(t, transport.TTHeader, 4, "go"))
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rd := buf.NewLinkBuffer()
	chunk := make([]byte, 4096)
	got := 0
	for got < 4 {
		var h transport.Header
		_, _, _, _, err := transport.ReadMessage(rd, transport.TTHeader, 0, &h)
		if err == nil {
			got++
			continue
		}
		if !errors.Is(err, buf.ErrNotEnough) {
			t.Fatalf("reading a reply: %v", err)
		}
		n, rerr := c.Read(chunk)
		if n > 0 {
			w, _ := rd.Malloc(n)
			copy(w, chunk[:n])
			rd.Flush()
		}
		if rerr != nil {
			t.Fatalf("after 5s, %d of 4 replies (3 calls of 12 MiB waiting for a 4th small call on the same connection): %v", got, rerr)
		}
	}
}
