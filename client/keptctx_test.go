package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/rpcinfo"
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

// TestContextKeptWhileTheNextCallRuns: a middleware keeps call A's context
// (for asynchronous logging, or a context.WithTimeout over it for work
// that outlives the call) and reads it while call B runs. It must answer
// for A: A's metainfo, A's caller context's cancellation, no RPCInfo once
// A is over. The call state is pooled; it was itself the context, and A's
// kept context read B's metainfo and B's Err, and the context package's
// watcher, getting B's nil Err when A's caller context ended, panicked.
func TestContextKeptWhileTheNextCallRuns(t *testing.T) {
	type kept struct {
		ctx, derived context.Context
		cancel       context.CancelFunc
	}
	keptA := make(chan kept, 1)
	inB, releaseB := make(chan struct{}), make(chan struct{})
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			if rpcinfo.FromContext(ctx).Method == "A" {
				d, cancel := context.WithTimeout(ctx, time.Hour) // kept, as for async work
				keptA <- kept{ctx, d, cancel}
				return nil
			}
			inB <- struct{}{}
			<-releaseB
			return nil
		}
	}
	c, err := client.New("svc", client.WithHostPorts("127.0.0.1:1"), client.WithMiddleware(mw))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 50 {
		parentA := &handlerCtx{Context: metainfo.WithValue(context.Background(), "user", "alice"), done: make(chan struct{})}
		if err := c.Call(parentA, "A", false, nil, nil); err != nil {
			t.Fatal(err)
		}
		a := <-keptA
		bDone := make(chan struct{})
		go func() {
			ctxB := metainfo.WithValue(context.Background(), "user", "bob")
			_ = c.Call(ctxB, "B", false, nil, nil) // likely on A's call state
			close(bDone)
		}()
		<-inB
		user, _ := metainfo.GetValue(a.ctx, "user")
		if user != "alice" || a.ctx.Err() != nil || rpcinfo.FromContext(a.ctx) != nil {
			t.Fatalf("iteration %d: A's kept context, while B runs: user %q, Err %v, RPCInfo %v; want alice, nil, none",
				i, user, a.ctx.Err(), rpcinfo.FromContext(a.ctx))
		}
		close(parentA.done) // A's caller context ends while B runs
		timer := time.NewTimer(2 * time.Second)
		select {
		case <-a.derived.Done():
			timer.Stop()
		case <-timer.C:
			t.Fatalf("iteration %d: a context derived from A's was not canceled with A's caller context", i)
		}
		a.cancel()
		releaseB <- struct{}{}
		<-bDone
	}
}
