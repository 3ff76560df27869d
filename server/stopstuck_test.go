package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// stuckHandler's Echo blocks until release is closed.
type stuckHandler struct {
	handler
	release chan struct{}
}

func (h *stuckHandler) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	<-h.release
	return &echotest.Response{Msg: "late"}, nil
}

// TestStopSaysWhatIsStuck: when Stop's context ends while a handler has
// not returned, Stop returns the context's error saying that requests are
// still in flight and how many, not the bare context error.
func TestStopSaysWhatIsStuck(t *testing.T) {
	h := &stuckHandler{release: make(chan struct{})}
	s := server.New()
	_, addr := startWith(t, s, h)
	defer close(h.release) // before the cleanup's Stop
	c := dial(t, addr, transport.TTHeader)
	for seq := int32(1); seq <= 2; seq++ {
		if err := c.send("echo", thrift.CALL, seq, &echotest.EchoEchoArgs{Req: &echotest.Request{}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := waitStat(func() int64 { return s.Stats().InFlight }, 2); got != 2 {
		t.Fatalf("InFlight = %d, want 2", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	err := s.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want context.DeadlineExceeded", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "2 requests") || !strings.Contains(msg, "in flight") {
		t.Fatalf("Stop = %q, want it to say 2 requests are still in flight", msg)
	}
}

// waitStat polls f until it returns want or 5 s pass, and returns its
// last value.
func waitStat(f func() int64, want int64) int64 {
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := f()
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(2 * time.Millisecond)
	}
}
