package client

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// TestMuxFlushCarriesAtMostFlushBatchFrames: writers queued behind one
// another on a multiplexed connection share flushes, but none carries more
// than muxFlushBatch frames: the writer of the 16th frame flushes although
// others wait behind it (otherwise, with all 40 queued, only the last would
// flush, once).
func TestMuxFlushCarriesAtMostFlushBatchFrames(t *testing.T) {
	const writers = 40
	addr := silentServer(t)
	c, err := New("svc", WithHostPorts(addr), WithMuxConnection(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	mc, err := c.mux.get(context.Background(), addr, deadline)
	if err != nil {
		t.Fatal(err)
	}
	mc.wmu.Lock()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			var h transport.Header
			call := &muxCall{ch: make(chan struct{}, 1), seq: int32(i + 1), method: "m"}
			if _, err := mc.send(context.Background(), &h, "m", thrift.CALL, call.seq, new(thrift.ApplicationException), deadline, call); err != nil {
				errs <- err
			}
		})
	}
	for mc.wq.Load() != writers { // every writer committed, waiting for wmu
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writers queued for the write lock", mc.wq.Load(), writers)
		}
		time.Sleep(time.Millisecond)
	}
	mc.wmu.Unlock()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := (writers + muxFlushBatch - 1) / muxFlushBatch
	if s, f := mc.sends.Load(), mc.flushes.Load(); s != writers || f != int64(want) {
		t.Fatalf("%d frames written with %d flushes, want %d with %d (at most %d a flush)", s, f, writers, want, muxFlushBatch)
	}
}
