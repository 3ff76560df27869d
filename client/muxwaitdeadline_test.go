//go:build linux

package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// checkCtxDeadline calls n times with a 20 ms context deadline (earlier
// than any RPC timeout) and fails unless each error is a Timeout wrapping
// context.DeadlineExceeded, as timeoutError makes it when the deadline
// passes while the call waits for its reply.
func checkCtxDeadline(t *testing.T, c *client.Client, where string) {
	t.Helper()
	bad := 0
	var last error
	const n = 10
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := echo(ctx, c, &echoArgs{})
		cancel()
		if rpcerr.CodeOf(err) != rpcerr.Timeout {
			t.Fatalf("got %v, want a timeout", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			bad++
			last = err
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d calls ended by their context's deadline %s do not wrap context.DeadlineExceeded; last: %v", bad, n, where, last)
	}
}

// TestMuxDialWaitWrapsContextDeadline: on the multiplexed pool, a call
// waiting for another caller's dial of its slot (muxSlots.lockDial) when
// its context's deadline passes got a bare Timeout, without
// context.DeadlineExceeded, unlike the same deadline passing in its own
// dial or while it waits for the reply: errors.Is(err,
// context.DeadlineExceeded) must not depend on where the call waited.
func TestMuxDialWaitWrapsContextDeadline(t *testing.T) {
	addr := blackhole(t)
	c, err := client.New("Echo", client.WithHostPorts(addr), client.WithMuxConnection(1),
		client.WithConnectTimeout(0), client.WithRPCTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := make(chan error, 1)
	go func() { // dials the only slot; the dial hangs until its deadline
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := echo(ctx, c, &echoArgs{})
		first <- err
	}()
	time.Sleep(50 * time.Millisecond)
	checkCtxDeadline(t, c, "while waiting for the slot's dial")
	<-first
}

// TestMuxWriteWaitWrapsContextDeadline: the same for a call waiting to
// write behind a flush the peer does not read (muxConn.lockWrite).
func TestMuxWriteWaitWrapsContextDeadline(t *testing.T) {
	c := stalledMux(t)
	checkCtxDeadline(t, c, "while waiting to write behind a stalled flush")
}
