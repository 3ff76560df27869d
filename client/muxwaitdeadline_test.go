//go:build linux

package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
)

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
	checkCtxDeadline(t, c, 20*time.Millisecond, &echoArgs{}, "while waiting for the slot's dial")
	<-first
}

// TestMuxWriteWaitWrapsContextDeadline: the same for a call waiting to
// write behind a flush the peer does not read (muxConn.lockWrite).
func TestMuxWriteWaitWrapsContextDeadline(t *testing.T) {
	c := stalledMux(t)
	checkCtxDeadline(t, c, 20*time.Millisecond, &echoArgs{}, "while waiting to write behind a stalled flush")
}
