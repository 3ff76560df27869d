package client_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// stalledMux returns a client of one multiplexed connection to a server
// that accepts and never reads, with a call of a large request whose flush
// fills the socket and then waits (up to its 10s timeout) under the
// connection's write lock. The cleanup closes the client and waits for
// that call.
func stalledMux(t *testing.T) *client.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		if conn, err := ln.Accept(); err == nil {
			accepted <- conn // never read
		}
		close(accepted)
	}()
	c, err := client.New("Echo", client.WithHostPorts(ln.Addr().String()),
		client.WithMuxConnection(1), client.WithRPCTimeout(0))
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	big := make(chan error, 1)
	go func() {
		big <- c.Call(context.Background(), "echo", false, &echoArgs{Msg: make([]byte, 16<<20)}, new(echoResult),
			client.WithCallTimeout(10*time.Second))
	}()
	t.Cleanup(func() {
		c.Close()
		<-big
		ln.Close()
		if conn := <-accepted; conn != nil {
			conn.Close()
		}
	})
	waitFor(t, "the large request's flush to start", func() bool { return client.MuxFlushing(c) })
	return c
}

// TestMuxWriterWaitEndsByItsDeadline: while a flush is stalled under the
// write lock (the peer reads nothing), a second call with a 200ms timeout
// must fail with a Timeout near its own deadline, not wait for the lock
// until the stalled flush's 10s deadline.
func TestMuxWriterWaitEndsByItsDeadline(t *testing.T) {
	c := stalledMux(t)
	start := time.Now()
	_, err := echo(context.Background(), c, &echoArgs{Msg: []byte("small")}, client.WithCallTimeout(200*time.Millisecond))
	took := time.Since(start)
	if rpcerr.CodeOf(err) != rpcerr.Timeout {
		t.Fatalf("a call that cannot write within its 200ms timeout: got %v (code %v), want a Timeout error", err, rpcerr.CodeOf(err))
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("a call with a 200ms timeout waiting behind a stalled flush returned after %v (%v)", took, err)
	}
}

// TestMuxSeqInUseIsNotTaken: the sequence id (an int32) wraps after 2^32
// calls, so a long call may still wait under the id a new call takes. The
// new call must not take the waiting call's place: before, it replaced it
// among the pending calls, and the waiting call, once its deadline passed,
// waited forever for a reply handed to no one.
func TestMuxSeqInUseIsNotTaken(t *testing.T) {
	srv := startServer(t)
	c := muxClient(t, srv.Addr(), 1, client.WithRPCTimeout(5*time.Second))
	if _, err := echo(context.Background(), c, &echoArgs{}); err != nil { // opens the connection
		t.Fatal(err)
	}
	seq := client.SeqNow(c)
	long := make(chan error, 1)
	go func() {
		_, err := echo(context.Background(), c, &echoArgs{SleepMs: 1000}, client.WithCallTimeout(300*time.Millisecond))
		long <- err
	}()
	waitFor(t, "the long call to register", func() bool { return client.MuxPending(c) == 1 })
	client.SetSeq(c, seq) // the next call takes the long call's id
	_, err := echo(context.Background(), c, &echoArgs{Msg: []byte("same id")})
	t.Logf("the call given the id in use: %v", err)
	limit := time.NewTimer(3 * time.Second)
	defer limit.Stop()
	select {
	case err := <-long:
		if rpcerr.CodeOf(err) != rpcerr.Timeout {
			t.Fatalf("the long call (300ms timeout, answered after 1s): got %v, want a Timeout", err)
		}
	case <-limit.C:
		t.Fatal("the long call (300ms timeout) whose id a later call took still waited after 3s")
	}
}

// TestMuxWriterWaitEndsWithItsContext: while a flush is stalled under the
// write lock, a call without a timeout whose context is cancelled must
// return a Canceled error promptly, not wait for the stalled flush.
func TestMuxWriterWaitEndsWithItsContext(t *testing.T) {
	c := stalledMux(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := echo(ctx, c, &echoArgs{Msg: []byte("small")}, client.WithCallTimeout(0))
		done <- err
	}()
	// Registered (the stalled call and this one): it is about to write.
	waitFor(t, "the call to register", func() bool { return client.MuxPending(c) == 2 })
	cancel()
	limit := time.NewTimer(1500 * time.Millisecond)
	defer limit.Stop()
	select {
	case err := <-done:
		if rpcerr.CodeOf(err) != rpcerr.Canceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("a call whose context was cancelled while it waited to write: got %v (code %v), want a Canceled error", err, rpcerr.CodeOf(err))
		}
	case <-limit.C:
		t.Fatal("a call whose context was cancelled while it waited behind a stalled flush still ran after 1.5s")
	}
}
