package main

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
)

// TestRunRefusesHugeFlags: counts and sizes past the bounds are refused,
// naming them, before a server starts or memory is taken.
func TestRunRefusesHugeFlags(t *testing.T) {
	for _, c := range []struct{ callers, size int }{
		{1_000_000_000, 64},
		{50, 1 << 40},
	} {
		err := run(c.callers, time.Second, "long", c.size)
		if err == nil || !strings.Contains(err.Error(), "want -callers <=") {
			t.Errorf("-callers %d -size %d: %v, want the bounds", c.callers, c.size, err)
		}
	}
}

// instantEcho answers Echo at once, without a network or an allocation, so
// that a benchmark loop makes as many calls as it can. One caller only: the
// reply is shared.
type instantEcho struct {
	hello.HelloClient
	resp hello.EchoResponse
}

func (e *instantEcho) Echo(_ context.Context, req *hello.EchoRequest, _ ...client.CallOption) (*hello.EchoResponse, error) {
	e.resp.Msg = req.Msg
	return &e.resp, nil
}

// TestBenchMemoryBounded: what the benchmark keeps of its latencies does not
// grow with the number of calls (a long -duration must not exhaust memory).
func TestBenchMemoryBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := bench(new(instantEcho), 1, 300*time.Millisecond, 8)
	runtime.ReadMemStats(&after)
	if r.errors != 0 || r.calls == 0 {
		t.Fatalf("bench: %d calls, %d errors (%v)", r.calls, r.errors, r.firstErr)
	}
	// Keeping each latency would take 8 bytes a call at least.
	const budget = 256 << 10
	if got := after.TotalAlloc - before.TotalAlloc; got > budget || got > uint64(r.calls)*4 {
		t.Errorf("bench allocated %d bytes for %d calls; want at most %d, and under 4 a call", got, r.calls, budget)
	}
	if r.p50 > r.p99 || r.p99 > r.max || r.max <= 0 {
		t.Errorf("latencies p50 %v, p99 %v, max %v: want p50 <= p99 <= max, max > 0", r.p50, r.p99, r.max)
	}
}
