package client_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
)

// handlerDeadline is what a Petrel handler saw of its call's deadline.
type handlerDeadline struct {
	has       bool
	remaining time.Duration // time to the context's deadline when the handler started
	sent      time.Duration // rpcinfo's Timeout: the RPC timeout the request carried
}

// startDeadlineServer runs the "Gov" service; its handler records its
// context's deadline in last and sleeps the milliseconds of the request's
// message, if any.
func startDeadlineServer(t *testing.T, last *atomic.Pointer[handlerDeadline]) string {
	return startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		hd := &handlerDeadline{}
		if d, ok := ctx.Deadline(); ok {
			hd.has, hd.remaining = true, time.Until(d)
		}
		if ri := rpcinfo.FromContext(ctx); ri != nil {
			hd.sent = ri.Timeout
		}
		last.Store(hd)
		if len(a.Msg) > 0 {
			d, err := time.ParseDuration(string(a.Msg))
			if err != nil {
				return err
			}
			time.Sleep(d)
		}
		r.Success, r.HasSuccess = a.Msg, true
		return nil
	})
}

// TestMethodTimeoutPrecedence: a call's timeout is its WithCallTimeout,
// else its method's WithMethodTimeout, else the client's WithRPCTimeout,
// and an earlier context deadline beats all three; the server's handler
// gets the remaining time as its context's deadline.
func TestMethodTimeoutPrecedence(t *testing.T) {
	var last atomic.Pointer[handlerDeadline]
	addr := startDeadlineServer(t, &last)
	for _, pool := range longAndMux(1) {
		c := newGovClient(t, client.WithHostPorts(addr), pool.opt,
			client.WithRPCTimeout(800*time.Millisecond),
			client.WithMethodTimeout("get", 300*time.Millisecond),
			client.WithMethodTimeout("put", time.Hour),
			client.WithMethodTimeout("put", 0), // the last one holds: no limit for "put"
		)
		ctxShort, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		for _, tc := range []struct {
			name   string
			ctx    context.Context
			method string
			opts   []client.CallOption
			want   time.Duration // 0: no deadline at the server
		}{
			{"method timeout", context.Background(), "get", nil, 300 * time.Millisecond},
			{"call timeout over the method's", context.Background(), "get", []client.CallOption{client.WithCallTimeout(500 * time.Millisecond)}, 500 * time.Millisecond},
			{"call timeout under the method's", context.Background(), "get", []client.CallOption{client.WithCallTimeout(200 * time.Millisecond)}, 200 * time.Millisecond},
			{"context deadline earlier than the method's", ctxShort, "get", nil, 150 * time.Millisecond},
			{"method timeout 0: no limit", context.Background(), "put", nil, 0},
			{"call timeout over a method without limit", context.Background(), "put", []client.CallOption{client.WithCallTimeout(400 * time.Millisecond)}, 400 * time.Millisecond},
		} {
			last.Store(nil)
			err := c.Call(tc.ctx, tc.method, false, &echoArgs{}, new(echoResult), tc.opts...)
			if err != nil {
				t.Fatalf("%s %s: %v", pool.name, tc.name, err)
			}
			hd := last.Load()
			if hd == nil {
				t.Fatalf("%s %s: the handler did not run", pool.name, tc.name)
			}
			if tc.want == 0 {
				if hd.has || hd.sent != 0 {
					t.Fatalf("%s %s: the handler got a deadline %v away (timeout %v sent), want none", pool.name, tc.name, hd.remaining, hd.sent)
				}
				continue
			}
			// The deadline bounds the handler's context: what remains of
			// the timeout when the request left the client, less the trip.
			if !hd.has || hd.remaining > tc.want || hd.remaining < tc.want-100*time.Millisecond {
				t.Fatalf("%s %s: the handler's deadline is %v away (has %v), want just under %v", pool.name, tc.name, hd.remaining, hd.has, tc.want)
			}
			if hd.sent > tc.want || hd.sent < tc.want-100*time.Millisecond {
				t.Fatalf("%s %s: the request carried RPC timeout %v, want just under %v", pool.name, tc.name, hd.sent, tc.want)
			}
		}
		cancel()
	}
}

// TestMethodTimeoutSeenByMiddleware: the timeout a middleware sees in
// rpcinfo follows the same precedence, for methods of any name.
func TestMethodTimeoutSeenByMiddleware(t *testing.T) {
	var seen atomic.Int64
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			seen.Store(int64(rpcinfo.FromContext(ctx).Timeout))
			return rpcerr.New(rpcerr.Internal, "stopped by the test's middleware")
		}
	}
	c := newGovClient(t, client.WithHostPorts("127.0.0.1:1"), client.WithMiddleware(mw),
		client.WithRPCTimeout(700*time.Millisecond), client.WithMethodTimeout("slow", 5*time.Second))
	for _, tc := range []struct {
		method string
		opts   []client.CallOption
		want   time.Duration
	}{
		{"slow", nil, 5 * time.Second},
		{"fast", nil, 700 * time.Millisecond},
		{"slow", []client.CallOption{client.WithCallTimeout(time.Second)}, time.Second},
		{"fast", []client.CallOption{client.WithCallTimeout(0)}, 0},
	} {
		c.Call(context.Background(), tc.method, false, &echoArgs{}, new(echoResult), tc.opts...)
		if got := time.Duration(seen.Load()); got != tc.want {
			t.Fatalf("%s with %d call options: rpcinfo Timeout %v, want %v", tc.method, len(tc.opts), got, tc.want)
		}
	}
}

// TestMethodTimeoutEndsTheCall: a method's timeout shorter than the
// handler's time ends the call with rpcerr.Timeout at that timeout, while
// another method of the same client keeps the client-wide timeout.
func TestMethodTimeoutEndsTheCall(t *testing.T) {
	var last atomic.Pointer[handlerDeadline]
	addr := startDeadlineServer(t, &last)
	for _, pool := range longAndMux(1) {
		c := newGovClient(t, client.WithHostPorts(addr), pool.opt,
			client.WithRPCTimeout(2*time.Second), client.WithMethodTimeout("get", 50*time.Millisecond))
		start := time.Now()
		err := c.Call(context.Background(), "get", false, &echoArgs{Msg: []byte("300ms")}, new(echoResult))
		el := time.Since(start)
		if rpcerr.CodeOf(err) != rpcerr.Timeout || el < 50*time.Millisecond || el > 250*time.Millisecond {
			t.Fatalf("%s: get with a 50ms method timeout against a 300ms handler: %v after %v", pool.name, err, el)
		}
		if !strings.Contains(err.Error(), "50ms") {
			t.Fatalf("%s: the timeout error does not name the method's timeout: %v", pool.name, err)
		}
		if err := c.Call(context.Background(), "put", false, &echoArgs{Msg: []byte("300ms")}, new(echoResult)); err != nil {
			t.Fatalf("%s: put under the client-wide timeout: %v", pool.name, err)
		}
	}
}

func TestWithMethodTimeoutInvalid(t *testing.T) {
	for _, tc := range []struct {
		opt  client.Option
		want string
	}{
		{client.WithMethodTimeout("", time.Second), "empty method name"},
		{client.WithMethodTimeout("get", -time.Millisecond), `WithMethodTimeout("get", -1ms): negative`},
	} {
		_, err := client.New("Gov", client.WithHostPorts("127.0.0.1:1"), tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("client.New: %v, want an error saying %q", err, tc.want)
		}
	}
}

// TestNegativeCallTimeout: a call whose WithCallTimeout is negative (a
// budget already spent) times out at once, without sending; it does not
// run unbounded.
func TestNegativeCallTimeout(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s, client.WithRPCTimeout(5*time.Second))
			start := time.Now()
			_, err := echo(context.Background(), c, &echoArgs{SleepMs: 300}, client.WithCallTimeout(-time.Millisecond))
			checkTimeout(t, err, time.Since(start), 200*time.Millisecond)
			if n := srv.requests.Load(); n != 0 {
				t.Fatalf("the server read %d requests, want none", n)
			}
		})
	}
}

// TestUnsentTimeoutIsANetError: Call's doc says a timed-out call's error is
// a net.Error with Timeout() true; so it is without errors.As (a type
// assertion, as code written for net's errors does) when the call timed
// out before its request was sent.
func TestUnsentTimeoutIsANetError(t *testing.T) {
	srv := startServer(t)
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"long", nil},
		{"mux", []client.Option{client.WithMuxConnection(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New("Echo", append([]client.Option{client.WithHostPorts(srv.Addr())}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.Call(context.Background(), "echo", false, &echoArgs{}, new(echoResult), client.WithCallTimeout(-time.Second))
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				t.Fatalf("%v (%T) is not a net.Error whose Timeout() is true", err, err)
			}
		})
	}
}
