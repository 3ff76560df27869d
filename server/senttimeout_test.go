package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
)

// leftReporter answers with the time its context has left.
type leftReporter struct{}

func (leftReporter) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	dl, _ := ctx.Deadline()
	return &echotest.Response{Msg: fmt.Sprintf("left=%v sent-timeout=%v", time.Until(dl).Round(10*time.Millisecond), rpcinfo.FromContext(ctx).Timeout)}, nil
}
func (leftReporter) Notify(context.Context, string) error { return nil }

// slowFirstResolver resolves addr only after delay (a registry slow to answer).
type slowFirstResolver struct {
	addr  string
	delay time.Duration
}

func (r slowFirstResolver) Resolve(ctx context.Context, _ string) ([]discovery.Instance, error) {
	return []discovery.Instance{{Address: r.addr}}, nil
}
func (r slowFirstResolver) Watch(ctx context.Context, _ string) (discovery.Watcher, error) {
	return &slowFirstWatcher{r: r, closed: make(chan struct{})}, nil
}

type slowFirstWatcher struct {
	r      slowFirstResolver
	n      int
	once   sync.Once
	closed chan struct{}
}

func (w *slowFirstWatcher) Next(ctx context.Context) ([]discovery.Instance, error) {
	w.n++
	wait := w.r.delay
	if w.n > 1 {
		wait = time.Hour
	}
	select {
	case <-time.After(wait):
		return []discovery.Instance{{Address: w.r.addr}}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-w.closed:
		return nil, discovery.ErrWatcherClosed
	}
}
func (w *slowFirstWatcher) Close() error { w.once.Do(func() { close(w.closed) }); return nil }

// TestSentTimeoutAfterSlowPick: the RPC timeout sent in TTHeader is the
// time left as the request is written, after the pick has waited 700 ms
// for the first resolution: it was the time left before the pick, and the
// server's handler got a deadline 700 ms later than the client's.
func TestSentTimeoutAfterSlowPick(t *testing.T) {
	_, addr := startWith(t, server.New(), leftReporter{})
	c, err := echotest.NewEchoClient("svc", client.WithResolver(slowFirstResolver{addr: addr, delay: 700 * time.Millisecond}),
		client.WithRPCTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	resp, err := c.Echo(context.Background(), &echotest.Request{Action: "x"})
	if err != nil {
		t.Fatal(err)
	}
	clientLeft := time.Second - time.Since(start)
	dlServer, _ := time.ParseDuration(resp.Msg[len("left="):indexSpace(resp.Msg)])
	if dlServer > clientLeft+100*time.Millisecond {
		t.Errorf("the handler's deadline (%v left) is %v later than the client's (%v left)", dlServer, (dlServer - clientLeft).Round(10*time.Millisecond), clientLeft.Round(10*time.Millisecond))
	}
}

func indexSpace(s string) int {
	for i := range s {
		if s[i] == ' ' {
			return i
		}
	}
	return len(s)
}
