package client_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/transport"
)

// onewayRetryer retries "echo" as idempotent: 3 attempts, no backoff,
// backup requests after backup (0: none), each attempt bounded by
// attemptTimeout (0: none).
func onewayRetryer(t *testing.T, backup, attemptTimeout time.Duration) *retry.Retryer {
	return newRetryer(t, retry.Config{
		Methods: map[string]retry.Policy{"echo": {
			MaxAttempts: 3, Idempotent: true, Backoff: retry.Backoff{Base: -1},
			BackupDelay: backup, AttemptTimeout: attemptTimeout,
		}},
		Budget: retry.BudgetConfig{Ratio: 1, MinRetries: 1000},
	})
}

// TestOnewayNoBackupRequests: a oneway call gets no reply, so a backup
// request would only send it again. A oneway call of a method whose policy
// sends backup requests after a microsecond (each attempt dials, which
// takes longer) reaches the server once.
func TestOnewayNoBackupRequests(t *testing.T) {
	srv := startServer(t)
	c, err := client.New("echo", client.WithHostPorts(srv.Addr()), client.WithTransport(transport.Framed),
		client.WithShortConnection(), client.WithRetry(onewayRetryer(t, time.Microsecond, 0)))
	if err != nil {
		t.Fatal(err)
	}
	const calls = 20
	for i := range calls {
		if err := c.Call(context.Background(), "echo", true, &echoArgs{Msg: []byte("fire")}, nil); err != nil {
			t.Fatalf("oneway call %d: %v", i, err)
		}
	}
	c.Close()
	// Once the client is closed and the server has seen every connection
	// end, every request written has been read.
	deadline := time.Now().Add(5 * time.Second)
	for {
		srv.mu.Lock()
		open := len(srv.conns)
		srv.mu.Unlock()
		if open == 0 && srv.oneways.Load() >= calls {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server read %d oneway requests of %d calls, %d connections still open", srv.oneways.Load(), calls, open)
		}
		time.Sleep(time.Millisecond)
	}
	if n := srv.oneways.Load(); n != calls {
		t.Fatalf("the server read %d oneway requests for %d oneway calls: backup requests sent them again", n, calls)
	}
}

// TestOnewayNotRetriedOnceWriting: a oneway call whose write failed after
// it began (the server stopped reading, the attempt timed out) may have
// reached the server; it is not sent again, even for an idempotent method.
func TestOnewayNotRetriedOnceWriting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	done := make(chan struct{})
	var held []net.Conn
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			held = append(held, conn) // never read
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, conn := range held {
			conn.Close()
		}
	})
	for _, pool := range []client.Option{client.WithShortConnection(), client.WithLongConnection(client.LongPoolConfig{}), client.WithMuxConnection(1)} {
		accepted.Store(0)
		c, err := client.New("echo", client.WithHostPorts(ln.Addr().String()), pool,
			client.WithRPCTimeout(2*time.Second), client.WithRetry(onewayRetryer(t, 0, 100*time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		big := &echoArgs{Msg: make([]byte, 64<<20)} // more than the socket buffers hold
		err = c.Call(context.Background(), "echo", true, big, nil)
		c.Close()
		if err == nil {
			t.Fatal("a oneway call of 64 MiB to a server that reads nothing succeeded")
		}
		if retry.NotSent(err) {
			t.Fatalf("the failed write is marked not sent: %v", err)
		}
		// The attempts' connections were all made before Call returned,
		// but the listener may not have accepted them yet.
		deadline := time.Now().Add(2 * time.Second)
		for accepted.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := accepted.Load(); n != 1 || strings.Contains(err.Error(), "attempts") {
			t.Fatalf("a oneway call whose write began was sent on %d connections: %v", n, err)
		}
	}
}
