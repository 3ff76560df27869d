package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/transport"
)

// panickyArgs is a request whose (hand-written) codec panics on writing.
type panickyArgs struct{ echoArgs }

func (*panickyArgs) FastWrite([]byte) int { panic("args codec bug") }

// panickyResult is a result whose codec panics on reading.
type panickyResult struct{ echoResult }

func (*panickyResult) FastRead([]byte) (int, error) { panic("result codec bug") }

// openServerConns counts the server's connections that are still open.
func (s *testServer) openServerConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// TestCodecPanicClosesPooledConnection: a codec that panics while a short
// or long pool's call holds its connection (writing the request, reading
// the reply) does not leave that connection open: the panic reaches the
// caller (here a recovering middleware, as services often have), the
// connection is closed, and the next call works on a fresh one. Before, each
// such panic kept one connection open (and counted in PoolStats.Open) until
// Close.
func TestCodecPanicClosesPooledConnection(t *testing.T) {
	pools := []setup{
		{"short", transport.TTHeader, client.WithShortConnection()},
		{"long", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})},
	}
	for _, s := range pools {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s, client.WithMiddleware(recoverMW))
			ctx := context.Background()
			for range 3 {
				c.Call(ctx, "echo", false, &panickyArgs{}, &echoResult{})
				c.Call(ctx, "echo", false, &echoArgs{}, &panickyResult{})
			}
			if st := c.PoolStats(); st.Open != 0 {
				t.Fatalf("after 6 calls whose codec panicked the pool has %d connections open, want 0", st.Open)
			}
			waitFor(t, "the server to see every connection closed", func() bool { return srv.openServerConns() == 0 })
			if res, err := echo(ctx, c, &echoArgs{Msg: []byte("ok")}); err != nil || string(res.Success) != "ok" {
				t.Fatalf("call after the panics: %v %+v", err, res)
			}
		})
	}
}

// TestCodecPanicLeavesMuxUsable: a request codec that panics while a
// multiplexed call holds the connection's write lock reaches the caller
// (here a recovering middleware) and leaves the connection usable: the
// lock is released, the partial frame dropped, and the call no longer
// counted in flight. Before, every later call on the connection waited for
// the lock forever, whatever its timeout.
func TestCodecPanicLeavesMuxUsable(t *testing.T) {
	var panicked int
	recoverMW := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) (err error) {
			defer func() {
				if r := recover(); r != nil {
					panicked++
					err = nil
				}
			}()
			return next(ctx, req, resp)
		}
	}
	srv := startServer(t)
	c := newClient(t, srv.Addr(), setup{"mux", transport.TTHeader, client.WithMuxConnection(1)},
		client.WithMiddleware(recoverMW), client.WithRPCTimeout(2*time.Second))
	ctx := context.Background()
	if res, err := echo(ctx, c, &echoArgs{Msg: []byte("first")}); err != nil || string(res.Success) != "first" {
		t.Fatalf("first call: %v %+v", err, res)
	}
	c.Call(ctx, "echo", false, &panickyArgs{}, &echoResult{})
	if panicked != 1 {
		t.Fatalf("the codec's panic reached the middleware %d times, want 1", panicked)
	}
	done := make(chan error, 1)
	go func() {
		res, err := echo(ctx, c, &echoArgs{Msg: []byte("after")})
		if err == nil && string(res.Success) != "after" {
			err = fmt.Errorf("got %q", res.Success)
		}
		done <- err
	}()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("call after the panic: %v", err)
		}
	case <-timer.C:
		t.Fatal("a call after a codec panic on the multiplexed connection did not end within 5s (its RPC timeout is 2s): the write lock was never released")
	}
	if n := client.MuxPending(c); n != 0 {
		t.Fatalf("after the calls ended the multiplexed connection counts %d calls in flight, want 0", n)
	}
}

// TestResultCodecPanicOnMux: a multiplexed connection decodes replies on its
// reader goroutine, where a panic of the result's codec (a hand-written
// codec's bug) would end the process. It reaches the caller instead, on the
// caller's goroutine as with the other pools (here a recovering
// middleware), and the connection goes on serving calls.
func TestResultCodecPanicOnMux(t *testing.T) {
	var recovered []any
	recoverMW := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) (err error) {
			defer func() {
				if r := recover(); r != nil {
					recovered = append(recovered, r)
				}
			}()
			return next(ctx, req, resp)
		}
	}
	srv := startServer(t)
	c := newClient(t, srv.Addr(), setup{"mux", transport.TTHeader, client.WithMuxConnection(1)},
		client.WithMiddleware(recoverMW), client.WithRPCTimeout(2*time.Second))
	ctx := context.Background()
	for range 3 {
		c.Call(ctx, "echo", false, &echoArgs{Msg: []byte("x")}, &panickyResult{})
	}
	if len(recovered) != 3 || recovered[0] != "result codec bug" {
		t.Fatalf("the middleware recovered %v, want the result codec's panic 3 times", recovered)
	}
	if res, err := echo(ctx, c, &echoArgs{Msg: []byte("ok")}); err != nil || string(res.Success) != "ok" {
		t.Fatalf("call after the panics: %v %+v", err, res)
	}
	if n := client.MuxConns(c); n != 1 {
		t.Fatalf("%d multiplexed connections after the panics, want the one", n)
	}
}

// recoverMW is a middleware that recovers a panic of the call (as services
// often have one), ending the call without an error.
func recoverMW(next endpoint.Endpoint) endpoint.Endpoint {
	return func(ctx context.Context, req, resp any) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = nil
			}
		}()
		return next(ctx, req, resp)
	}
}
