package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
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
