package server

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/transport"
)

// flushCounter is a connection whose Writer counts its flushes.
type flushCounter struct {
	netpoll.Connection
	w countingWriter
}

type countingWriter struct {
	buf.Writer
	flushes atomic.Int32
}

func (c *flushCounter) Writer() buf.Writer { return &c.w }

func (w *countingWriter) Flush() error {
	w.flushes.Add(1)
	return w.Writer.Flush()
}

// TestConcurrentRepliesFlushAtMostMaxQueued: TTHeader replies written at
// once by many handlers share flushes, but none carries more than
// maxQueued replies: the writer of the 16th reply since the last flush
// flushes although others wait behind it (otherwise, with all 40 queued,
// only the last would flush, once).
func TestConcurrentRepliesFlushAtMostMaxQueued(t *testing.T) {
	const writers = 40
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // the client: reads and drops the replies
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	conn, err := netpoll.DialConnection("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fc := &flushCounter{Connection: conn}
	fc.w.Writer = conn.Writer()
	cs := &connState{s: New(), conn: fc, proto: transport.TTHeader}
	cs.wmu.Lock()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			var h transport.Header
			if err := cs.write(&h, "m", thrift.REPLY, int32(i+1), 0, new(thrift.ApplicationException), true); err != nil {
				errs <- err
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for cs.writers.Load() != writers { // every writer waiting for wmu
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writers waiting for the write lock", cs.writers.Load(), writers)
		}
		time.Sleep(time.Millisecond)
	}
	cs.wmu.Unlock()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := (writers + maxQueued - 1) / maxQueued
	if f := fc.w.flushes.Load(); f != int32(want) {
		t.Fatalf("%d replies written with %d flushes, want %d (at most %d a flush)", writers, f, want, maxQueued)
	}
}
