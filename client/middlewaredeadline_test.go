package client_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/retry"
)

// The deadline of a middleware's context (one outside the retry middleware,
// or a retry policy's AttemptTimeout) binds an attempt everywhere: while it
// waits for the first resolution, and in the TTHeader timeout a backup
// request's attempt sends.

// TestFirstResolutionWaitKeepsMiddlewareDeadline: a middleware that bounds
// the call with context.WithTimeout (derived from the call's context, as
// WithMiddleware allows) ends a call that waits for the first resolution.
// (The wait once watched only the call's own deadline and context: with no
// RPC timeout the call waited until Close, 1 s later, not 50 ms.)
func TestFirstResolutionWaitKeepsMiddlewareDeadline(t *testing.T) {
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			return next(ctx, req, resp)
		}
	}
	c, err := client.New("Echo", client.WithResolver(stuckResolver{}), client.WithMiddleware(mw), client.WithRPCTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := echo(context.Background(), c, &echoArgs{})
		done <- err
	}()
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		c.Close()
		if el := time.Since(start); el > 500*time.Millisecond {
			t.Fatalf("call took %v: %v", el, err)
		}
	case <-timer.C:
		c.Close() // ends the wait for the first resolution
		err := <-done
		t.Fatalf("call with a 50ms middleware deadline still waiting after %v; it returned only at Close: %v", time.Since(start), err)
	}
}

// TestFirstResolutionWaitKeepsAttemptTimeout: Policy.AttemptTimeout bounds
// an attempt waiting for the first resolution, so a second attempt follows
// (it once waited out the call's whole 1 s RPC timeout).
func TestFirstResolutionWaitKeepsAttemptTimeout(t *testing.T) {
	r, err := retry.New(retry.Config{Default: retry.Policy{MaxAttempts: 2, Idempotent: true, AttemptTimeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New("Echo", client.WithResolver(stuckResolver{}), client.WithRetry(r))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err = echo(ctx, c, &echoArgs{})
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Fatalf("call with AttemptTimeout 50ms (2 attempts) took %v (err %v)", el, err)
	}
}

// TestBackupAttemptSendsMiddlewareDeadline: a middleware (WithMiddleware)
// bounds the call with context.WithTimeout(ctx, 200ms) under a 5 s RPC
// timeout, and the server's handler gets those 200 ms, with plain retries
// and with backup requests alike. A backup request's attempt runs under a
// call state of its own, whose deadline was the call's (the RPC timeout):
// it sent 5 s, and the handler ran 25 times longer than the caller waited.
func TestBackupAttemptSendsMiddlewareDeadline(t *testing.T) {
	var last atomic.Pointer[handlerDeadline]
	addr := startDeadlineServer(t, &last)
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			return next(ctx, req, resp)
		}
	}
	hedge, err := retry.New(retry.Config{Default: retry.Policy{MaxAttempts: 2, Idempotent: true, BackupDelay: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := retry.New(retry.Config{Default: retry.Policy{MaxAttempts: 2, Idempotent: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		r    *retry.Retryer
	}{{"retries", plain}, {"backup requests", hedge}} {
		c := newGovClient(t, client.WithHostPorts(addr), client.WithRPCTimeout(5*time.Second),
			client.WithMiddleware(mw), client.WithRetry(tc.r))
		last.Store(nil)
		if err := c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		hd := last.Load()
		if hd == nil {
			t.Fatalf("%s: the handler recorded nothing", tc.name)
		}
		if !hd.has || hd.remaining > 200*time.Millisecond || hd.sent > 200*time.Millisecond {
			t.Errorf("%s: the server's handler got a deadline %v away (RPC timeout %v sent); the caller's middleware gives the call 200ms", tc.name, hd.remaining, hd.sent)
		}
	}
}

// TestFirstResolutionTimeoutSaysWhichDeadline: a wait for the first
// resolution ended by the attempt's deadline (a retry policy's
// AttemptTimeout, a middleware's context) says whose deadline it was and
// wraps context.DeadlineExceeded, as timeoutError does. It said "the call's
// deadline passed" for a call that had none (WithRPCTimeout(0), no
// context deadline).
func TestFirstResolutionTimeoutSaysWhichDeadline(t *testing.T) {
	r, err := retry.New(retry.Config{Default: retry.Policy{MaxAttempts: 2, Idempotent: true, AttemptTimeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			return next(ctx, req, resp)
		}
	}
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"AttemptTimeout", []client.Option{client.WithRetry(r)}},
		{"middleware WithTimeout", []client.Option{client.WithMiddleware(mw)}},
	} {
		opts := append([]client.Option{client.WithResolver(stuckResolver{}), client.WithRPCTimeout(0)}, tc.opts...)
		c, err := client.New("Echo", opts...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = echo(context.Background(), c, &echoArgs{})
		c.Close()
		if strings.Contains(err.Error(), "the call's deadline passed") || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: a call with no deadline of its own (WithRPCTimeout(0), no context deadline): %v (wraps DeadlineExceeded: %v)",
				tc.name, err, errors.Is(err, context.DeadlineExceeded))
		}
	}
}
