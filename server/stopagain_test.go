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

// TestStopAgainWaitsForStuckHandler: after a Stop that its context ended
// while a handler had not returned, a later Stop does not report success
// while that handler still runs: with an ended context it returns the
// context's error saying what is still in flight, and with a live one it
// returns nil only once the handler has returned.
func TestStopAgainWaitsForStuckHandler(t *testing.T) {
	h := &stuckHandler{release: make(chan struct{})}
	s := server.New()
	_, addr := startWith(t, s, h)
	c := dial(t, addr, transport.TTHeader)
	if err := c.send("echo", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := waitStat(func() int64 { return s.Stats().InFlight }, 1); got != 1 {
		close(h.release)
		t.Fatalf("InFlight = %d, want 1", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		close(h.release)
		t.Fatalf("first Stop = %v, want context.DeadlineExceeded", err)
	}

	expired, cancel2 := context.WithCancel(context.Background())
	cancel2()
	err := s.Stop(expired)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), " 1 request in flight ") {
		t.Errorf("a second Stop with an ended context while a handler runs = %v, want context.Canceled saying 1 request is in flight", err)
	}

	released := make(chan struct{})
	stopped := make(chan error, 1)
	go func() {
		err := s.Stop(context.Background())
		select {
		case <-released:
		default:
			err = errors.New("returned while the handler was still running")
		}
		stopped <- err
	}()
	timer := time.NewTimer(50 * time.Millisecond)
	defer timer.Stop()
	select {
	case err := <-stopped:
		close(h.release)
		t.Fatalf("a third Stop with a live context returned while the handler ran: %v", err)
	case <-timer.C:
	}
	close(released)
	close(h.release)
	if err := <-stopped; err != nil {
		t.Errorf("a third Stop with a live context = %v, want nil once the handler has returned", err)
	}
}
