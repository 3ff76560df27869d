package client_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/retry"
)

// TestMuxRetryGetsItsOwnReply: an attempt that timed out on a multiplexed
// connection is retried there; the first attempt's late reply must not end
// the retry, which waits for its own.
func TestMuxRetryGetsItsOwnReply(t *testing.T) {
	var n atomic.Int32
	firstDone := make(chan struct{})
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		if n.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond)
			r.Success, r.HasSuccess = []byte("first"), true
			close(firstDone)
			return nil
		}
		<-firstDone // the first reply is on its way before this one
		time.Sleep(20 * time.Millisecond)
		r.Success, r.HasSuccess = []byte("second"), true
		return nil
	})
	r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{
		"get": {MaxAttempts: 2, Idempotent: true, AttemptTimeout: 200 * time.Millisecond, Backoff: retry.Backoff{Base: -1}},
	}})
	c := newGovClient(t, client.WithHostPorts(addr), client.WithMuxConnection(1), client.WithRetry(r),
		client.WithRPCTimeout(5*time.Second))
	res := new(echoResult)
	if err := c.Call(context.Background(), "get", false, &echoArgs{}, res); err != nil {
		t.Fatal(err)
	}
	if string(res.Success) != "second" {
		t.Fatalf("the retry got %q, the reply of the attempt that timed out; want %q", res.Success, "second")
	}
	if n.Load() != 2 {
		t.Fatalf("%d attempts reached the server, want 2", n.Load())
	}
}
