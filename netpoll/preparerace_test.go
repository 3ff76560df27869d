//go:build linux

package netpoll_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestCloseFromOnPrepareGoroutine: OnPrepare gives each connection to a
// goroutine that closes it (a limiter refusing it elsewhere), so that some
// Close calls land while the connection is being registered. None may
// leave its fd open and in a poller: with the peers still there and their
// bytes unread, such an fd would be reported readable on every wait, and
// the poller would spin on it for good.
func TestCloseFromOnPrepareGoroutine(t *testing.T) {
	// Each phase has a WaitGroup of its own, handed to the poller through
	// an atomic: the race detector requires a WaitGroup's Add from zero to
	// follow its previous Wait, and a connection's arrival (through the
	// kernel) is no such order.
	var phase atomic.Pointer[sync.WaitGroup]
	phase.Store(new(sync.WaitGroup))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	loop, err := netpoll.NewEventLoop(netpoll.Config{
		OnRequest: func(ctx context.Context, c netpoll.Connection) error { return nil },
		OnPrepare: func(c netpoll.Connection) context.Context {
			wg := phase.Load()
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.Close()
			}()
			return context.Background()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- loop.Serve(ln) }()
	// One connection first, so that the loop's own fds (its poller's) are
	// open before the count.
	if p, err := net.Dial("tcp", ln.Addr().String()); err != nil {
		t.Fatal(err)
	} else {
		p.SetReadDeadline(time.Now().Add(5 * time.Second))
		p.Read(make([]byte, 1))
		p.Close()
	}
	phase.Load().Wait()
	phase.Store(new(sync.WaitGroup))
	time.Sleep(50 * time.Millisecond)
	before := openFDs(t)
	const n = 1000
	peers := make([]net.Conn, 0, n)
	defer func() {
		for _, p := range peers {
			p.Close()
		}
	}()
	for range n {
		p, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		peers = append(peers, p)
	}
	// Every peer's connection has been closed by the server once each
	// reads EOF.
	for i, p := range peers {
		p.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := p.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Fatalf("peer %d: read %v, want the server's close", i, err)
		}
	}
	phase.Load().Wait()
	// The server's fds are closed by their pollers after a batch: allow it
	// a moment. (The peers' own fds are still open: they count in before's
	// stead.)
	var leaked int
	for range 100 {
		if leaked = openFDs(t) - before - n; leaked <= 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if leaked > 0 {
		t.Errorf("%d of %d fds closed from OnPrepare's goroutine left open", leaked, n)
	}
	// Nothing left to do: the process must be idle.
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	w0 := time.Now()
	time.Sleep(300 * time.Millisecond)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	if share := float64(cpu) / float64(time.Since(w0)); share > 0.5 {
		t.Errorf("with nothing to serve the process used %.0f%% of a processor: a poller spins", share*100)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := loop.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	<-served
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
