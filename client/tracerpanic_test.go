package client_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/stats"
)

// finishCounter counts a tracer's Start and Finish calls and keeps the
// last Finish's error.
type finishCounter struct {
	starts, finishes int
	err              error
}

func (f *finishCounter) Start(ctx context.Context) context.Context { f.starts++; return ctx }

func (f *finishCounter) Finish(ctx context.Context, st *stats.Stats) {
	f.finishes++
	f.err = st.Error
}

// TestTracerFinishesWhenMiddlewarePanics: a middleware's panic goes on to
// the caller, but the tracer still gets its Finish, with an error naming
// the panic: an in-flight gauge or an open span is not left behind.
func TestTracerFinishesWhenMiddlewarePanics(t *testing.T) {
	tr := &finishCounter{}
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error { panic("middleware bug") }
	}
	c := newGovClient(t, client.WithHostPorts("127.0.0.1:1"), client.WithTracer(tr), client.WithMiddleware(mw))
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		c.Call(context.Background(), "get", false, &echoArgs{}, &echoResult{})
	}()
	if recovered != "middleware bug" {
		t.Fatalf("recovered %v, want the middleware's panic to reach the caller", recovered)
	}
	if tr.starts != 1 || tr.finishes != 1 {
		t.Fatalf("tracer saw %d Start and %d Finish calls, want 1 and 1", tr.starts, tr.finishes)
	}
	if tr.err == nil || !strings.Contains(tr.err.Error(), "middleware bug") {
		t.Fatalf("Finish got error %v, want one naming the panic", tr.err)
	}
}

// TestTracerFinishesWhenMiddlewareExits: the same for a middleware that
// calls runtime.Goexit (t.FailNow in a test's middleware).
func TestTracerFinishesWhenMiddlewareExits(t *testing.T) {
	tr := &finishCounter{}
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error { runtime.Goexit(); return nil }
	}
	c := newGovClient(t, client.WithHostPorts("127.0.0.1:1"), client.WithTracer(tr), client.WithMiddleware(mw))
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Call(context.Background(), "get", false, &echoArgs{}, &echoResult{})
	}()
	<-done
	if tr.starts != 1 || tr.finishes != 1 {
		t.Fatalf("tracer saw %d Start and %d Finish calls, want 1 and 1", tr.starts, tr.finishes)
	}
	if tr.err == nil || !strings.Contains(tr.err.Error(), "Goexit") {
		t.Fatalf("Finish got error %v, want one saying the goroutine ended", tr.err)
	}
}
