package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// TestLargeBatchDoesNotDeadlock: validate accepts batches (-size*-pipeline)
// up to 64 MiB, but a server that echoes message by message (gonet) stops
// reading once its replies fill the sockets' buffers, and a client that
// wrote the whole batch before reading any reply then waited for itself
// until its deadline: -size 1048576 -pipeline 16 ended every gonet run with
// "write: i/o timeout" and 0 requests. The echo server here keeps its socket
// buffers fixed, so a batch of 16 MiB is far beyond what they hold.
func TestLargeBatchDoesNotDeadlock(t *testing.T) {
	const size, pipeline = 512 << 10, 32 // a 16 MiB batch
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		tc := c.(*net.TCPConn)
		// Fixed buffers (no autotuning), above loopback's 64 KiB MSS.
		_ = tc.SetReadBuffer(256 << 10)
		_ = tc.SetWriteBuffer(256 << 10)
		r := bufio.NewReaderSize(c, 64<<10)
		msg := make([]byte, size)
		for {
			if _, err := io.ReadFull(r, msg); err != nil {
				return
			}
			if _, err := c.Write(msg); err != nil {
				return
			}
		}
	}()

	now := time.Now()
	w := &worker{id: 1, addr: ln.Addr().String(), size: size, pipeline: pipeline,
		t0: now, t1: now.Add(time.Hour), stderr: io.Discard}
	conn, err := net.DialTimeout("tcp", w.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Long enough to echo 16 MiB over loopback many times over; a deadlocked
	// round trip ends here.
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, size*pipeline)
	for i := 0; i < pipeline; i++ {
		m := out[i*size : (i+1)*size]
		binary.LittleEndian.PutUint64(m, w.id<<40|uint64(i))
		binary.LittleEndian.PutUint64(m[size-8:], w.id<<40|uint64(i))
	}
	err = w.roundTrip(conn, bufio.NewReaderSize(conn, 64<<10), out, make([]byte, size), 0, time.Now())
	_ = conn.Close()
	<-served
	if err != nil {
		t.Fatalf("round trip of a %d MiB batch: %v", size*pipeline>>20, err)
	}
	if w.requests != pipeline || w.hist.Total() != pipeline {
		t.Errorf("%d requests and %d latencies recorded, want %d", w.requests, w.hist.Total(), pipeline)
	}
}
