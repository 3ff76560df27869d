package main

import (
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRunRefusesHugeFlags: sizes and counts whose load phase would not fit
// in memory are refused with the bounds, before anything is allocated.
func TestRunRefusesHugeFlags(t *testing.T) {
	for _, c := range []struct{ conns, size int }{
		{1, 100_000_000_000},
		{1_000_000, 1},
		{10000, 16 << 20},
	} {
		err := run(c.conns, c.size, time.Second)
		if err == nil || !strings.Contains(err.Error(), "want -size <=") {
			t.Errorf("-conns %d -size %d: %v, want the bounds", c.conns, c.size, err)
		}
	}
}

// TestLoadSaysWhatFailed: a load phase with errors says what the first one
// was, not only how many there were.
func TestLoadSaysWhatFailed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: every dial fails
	_, _, _, errs, first := load(addr, 2, 64, 100*time.Millisecond)
	if errs == 0 || first == nil || !strings.Contains(first.Error(), addr) {
		t.Fatalf("load of %s: %d errors, first %v; want errors and the first naming the address", addr, errs, first)
	}
}

// TestLoadMemoryBounded: what the load phase keeps of its latencies does not
// grow with the number of messages (a long -duration must not exhaust
// memory).
func TestLoadMemoryBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("with -race, sync.Pool drops buffers and netpoll allocates per message")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// A plain echo server: what it allocates is the net package's, not the
	// load phase's, but it runs in this process, so it allocates nothing
	// per message.
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const conns = 4
	qps, _, _, errs, first := load(ln.Addr().String(), conns, 1, 300*time.Millisecond)
	runtime.ReadMemStats(&after)
	if errs != 0 || qps == 0 {
		t.Fatalf("load: %v QPS, %d errors, the first %v", qps, errs, first)
	}
	const budget = 1 << 20
	if got := after.TotalAlloc - before.TotalAlloc; got > budget {
		t.Errorf("load of %d connections for 300ms (%.0f messages/s) allocated %d bytes; want at most %d", conns, qps, got, budget)
	}
}
