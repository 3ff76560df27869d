package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
	"github.com/petrel-rpc/petrel/internal/hist"
)

// instantClient echoes in process: no server, so the client role can be
// run on its own.
type instantClient struct{}

func (instantClient) caller(i int, action, msg string) (echoFunc, error) {
	return func(context.Context) (string, string, error) {
		time.Sleep(100 * time.Microsecond)
		return action, msg, nil
	}, nil
}

func (instantClient) Close() error { return nil }

// TestClientWaitsForParent checks that the client role, once it has printed
// its result, stays alive until the parent closes its stdin. The parent reads
// the client's CPU time and checks its threads' affinity when the window
// ends, after the "end" line; a client that exited on its own right after its
// result could be gone by then ("client at window end: listing threads of
// pid N: no /proc/N/task" failed a petrel run).
func TestClientWaitsForParent(t *testing.T) {
	impls["test-instant"] = implementation{newClient: func(string, int) (echoClient, error) { return instantClient{}, nil }}
	defer delete(impls, "test-instant")
	o := &options{role: "client", addr: "in-process", impl: "test-instant", size: 16, conc: 2,
		warmup: 10 * time.Millisecond, duration: 50 * time.Millisecond}

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := runClient(o, stdinR, stdoutW, io.Discard)
		_ = stdoutW.Close()
		done <- err
	}()
	lines := bufio.NewScanner(stdoutR)
	for _, want := range []string{harness.MarkStart, harness.MarkEnd, harness.MarkResult} {
		if !lines.Scan() {
			t.Fatalf("the client's output ended before %q: %v", want, <-done)
		}
		if !strings.HasPrefix(lines.Text(), want) {
			t.Fatalf("the client printed %q, want %q", lines.Text(), want)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdoutR) }()
	select {
	case err := <-done:
		t.Fatalf("the client returned (%v) after its result while its stdin was open: the parent may find it gone at the window's end", err)
	case <-time.After(300 * time.Millisecond):
	}
	_ = stdinW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runClient: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the client did not return after its stdin closed")
	}
}

// TestRecordLatencyBatches checks that latencies counted in batches give the
// histogram that counting each at once gives, those held when the caller's
// run ends included, and those a uint32 cannot hold.
func TestRecordLatencyBatches(t *testing.T) {
	var c caller
	var want hist.Histogram
	values := []int64{-5, 0, 1, 1 << 31, 1<<32 - 1, 1 << 32, 5e9}
	for i := range 3*latencyBatch + 17 {
		values = append(values, int64(i)*7919%2_000_000)
	}
	for _, v := range values {
		c.recordLatency(v)
		want.Record(v)
	}
	if c.npending == 0 {
		t.Fatal("nothing held pending: the test does not cover the end-of-run flush")
	}
	c.flushLatencies()
	got := c.hist
	if got != want {
		t.Errorf("batched histogram: total %d, mean %v, max %d, p50 %d, p99 %d; want %d, %v, %d, %d, %d",
			got.Total(), got.Mean(), got.Max(), got.Quantile(0.5), got.Quantile(0.99),
			want.Total(), want.Mean(), want.Max(), want.Quantile(0.5), want.Quantile(0.99))
	}
}
