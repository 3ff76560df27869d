package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
)

// handlerCtx is a context type the context package does not know, so
// context.WithTimeout over a context derived from it starts a goroutine that
// watches Done and then calls Err on its parent.
type handlerCtx struct {
	context.Context
	done chan struct{}
}

func (c *handlerCtx) Done() <-chan struct{} { return c.done }
func (c *handlerCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// TestContextKeptPastTheCall: a middleware that keeps a context derived from
// the call's (as context.WithTimeout does in its goroutine) must not crash or
// see another call's state once the call is over.
func TestContextKeptPastTheCall(t *testing.T) {
	kept := make(chan context.Context, 1)
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			d, cancel := context.WithTimeout(ctx, time.Hour)
			_ = cancel
			kept <- d
			return nil // answer without the network
		}
	}
	c, err := client.New("svc", client.WithHostPorts("127.0.0.1:1"), client.WithMiddleware(mw))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	parent := &handlerCtx{Context: context.Background(), done: make(chan struct{})}
	if err := c.Call(parent, "m", false, nil, nil); err != nil {
		t.Fatalf("Call: %v", err)
	}
	d := <-kept
	close(parent.done) // the watcher goroutine now asks the recycled state for Err
	timeout := time.NewTimer(2 * time.Second)
	defer timeout.Stop()
	select {
	case <-d.Done():
	case <-timeout.C:
		t.Fatal("the derived context was not canceled with its parent")
	}
	if d.Err() == nil {
		t.Fatal("derived context done without an error")
	}
}
