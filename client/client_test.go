package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/transport"
)

// setup is one way of connecting: a pool kind and a transport.
type setup struct {
	name  string
	proto transport.Protocol
	pool  client.Option
}

func setups() []setup {
	var out []setup
	for _, p := range []transport.Protocol{transport.TTHeader, transport.Framed, transport.Buffered} {
		out = append(out,
			setup{"short/" + p.String(), p, client.WithShortConnection()},
			setup{"long/" + p.String(), p, client.WithLongConnection(client.LongPoolConfig{})},
		)
	}
	return append(out, setup{"mux/ttheader", transport.TTHeader, client.WithMuxConnection(2)})
}

// ttheaderSetups are the setups that carry TTHeader (business status,
// timeouts sent to the server).
func ttheaderSetups() []setup {
	var out []setup
	for _, s := range setups() {
		if s.proto == transport.TTHeader {
			out = append(out, s)
		}
	}
	return out
}

func newClient(tb testing.TB, addr string, s setup, opts ...client.Option) *client.Client {
	tb.Helper()
	opts = append([]client.Option{client.WithHostPorts(addr), client.WithTransport(s.proto), s.pool}, opts...)
	c, err := client.New("Echo", opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func echo(ctx context.Context, c *client.Client, args *echoArgs, opts ...client.CallOption) (*echoResult, error) {
	res := new(echoResult)
	if err := c.Call(ctx, "echo", false, args, res, opts...); err != nil {
		return nil, err
	}
	return res, res.GetError()
}

func TestEchoEveryPoolAndTransport(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s)
			const calls = 20
			for i := range calls {
				msg := "hello " + strconv.Itoa(i)
				res, err := echo(context.Background(), c, &echoArgs{Msg: []byte(msg)})
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if string(res.Success) != msg || !res.HasSuccess {
					t.Fatalf("call %d: got %q, want %q", i, res.Success, msg)
				}
			}
			got := int(srv.accepted.Load())
			switch {
			case s.name[:5] == "short":
				if got != calls {
					t.Fatalf("short pool: %d connections for %d calls, want one each", got, calls)
				}
			case s.name[:4] == "long":
				if got != 1 {
					t.Fatalf("long pool: %d connections for %d sequential calls, want 1", got, calls)
				}
			default:
				if got > 2 {
					t.Fatalf("mux pool of 2: %d connections", got)
				}
			}
		})
	}
}

func TestErrorModel(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s)
			ctx := context.Background()

			// TApplicationException from the server.
			_, err := echo(ctx, c, &echoArgs{Mode: modeAppError})
			var ae *thrift.ApplicationException
			if rpcerr.CodeOf(err) != rpcerr.Application || !errors.As(err, &ae) || ae.Type != thrift.ExceptionInternalError {
				t.Fatalf("application exception: got %v (code %v)", err, rpcerr.CodeOf(err))
			}
			err = c.Call(ctx, "nope", false, &echoArgs{}, new(echoResult))
			if !errors.As(err, &ae) || ae.Type != thrift.ExceptionUnknownMethod {
				t.Fatalf("unknown method: got %v", err)
			}

			// A declared exception: Call returns nil, the result holds it.
			res := new(echoResult)
			if err := c.Call(ctx, "echo", false, &echoArgs{Mode: modeDeclared}, res); err != nil {
				t.Fatalf("declared exception: Call returned %v, want nil", err)
			}
			var o *oops
			if err := res.GetError(); !errors.As(err, &o) || o.Why != "declared" || rpcerr.CodeOf(err) != rpcerr.Declared {
				t.Fatalf("declared exception: result error %v", err)
			}

			// Business status: only TTHeader carries it.
			_, err = echo(ctx, c, &echoArgs{Mode: modeBiz})
			if s.proto == transport.TTHeader {
				var biz *rpcerr.BizStatusError
				if !errors.As(err, &biz) || biz.StatusCode != 1001 || biz.Message != "no stock" || biz.Extra["sku"] != "42" {
					t.Fatalf("business status: got %#v", err)
				}
				if rpcerr.CodeOf(err) != rpcerr.Business {
					t.Fatalf("business status code %v", rpcerr.CodeOf(err))
				}
			} else if err != nil {
				t.Fatalf("business status over %v: %v, want a plain reply", s.proto, err)
			}

			// The connection is reset by the server during the call.
			_, err = echo(ctx, c, &echoArgs{Mode: modeReset})
			if rpcerr.CodeOf(err) != rpcerr.Connection {
				t.Fatalf("reset: got %v (code %v), want a connection error", err, rpcerr.CodeOf(err))
			}
			// ... and the client recovers.
			if res, err := echo(ctx, c, &echoArgs{Msg: []byte("after")}); err != nil || string(res.Success) != "after" {
				t.Fatalf("after the reset: %v", err)
			}
		})
	}
}

func TestDialErrorIsConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, addr, s)
			_, err := echo(context.Background(), c, &echoArgs{})
			if rpcerr.CodeOf(err) != rpcerr.Connection {
				t.Fatalf("got %v (code %v), want a connection error", err, rpcerr.CodeOf(err))
			}
		})
	}
}

func checkTimeout(t *testing.T, err error, elapsed, limit time.Duration) {
	t.Helper()
	if rpcerr.CodeOf(err) != rpcerr.Timeout {
		t.Fatalf("got %v (code %v), want a timeout", err, rpcerr.CodeOf(err))
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%v is not a net.Error with Timeout() true", err)
	}
	if !errors.Is(err, &rpcerr.Error{Code: rpcerr.Timeout}) {
		t.Fatalf("errors.Is(%v, Timeout) is false", err)
	}
	if elapsed > limit {
		t.Fatalf("the call took %v, want at most %v", elapsed, limit)
	}
}

func TestTimeouts(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			ctx := context.Background()

			// Client-wide timeout.
			c := newClient(t, srv.Addr(), s, client.WithRPCTimeout(50*time.Millisecond))
			start := time.Now()
			_, err := echo(ctx, c, &echoArgs{SleepMs: 400})
			checkTimeout(t, err, time.Since(start), 300*time.Millisecond)
			// The late reply is discarded: the next call gets its own.
			if res, err := echo(ctx, c, &echoArgs{Msg: []byte("next")}, client.WithCallTimeout(5*time.Second)); err != nil || string(res.Success) != "next" {
				t.Fatalf("call after a timeout: %v %+v", err, res)
			}

			// Per-call timeout shorter than the client's.
			c2 := newClient(t, srv.Addr(), s, client.WithRPCTimeout(5*time.Second))
			start = time.Now()
			_, err = echo(ctx, c2, &echoArgs{SleepMs: 400}, client.WithCallTimeout(40*time.Millisecond))
			checkTimeout(t, err, time.Since(start), 300*time.Millisecond)

			// Per-call timeout longer than the client's replaces it.
			if _, err := echo(ctx, c, &echoArgs{SleepMs: 100}, client.WithCallTimeout(2*time.Second)); err != nil {
				t.Fatalf("a per-call timeout of 2s over a client's 50ms: %v", err)
			}

			// The context's deadline when it is the earliest.
			dctx, cancel := context.WithTimeout(ctx, 40*time.Millisecond)
			start = time.Now()
			_, err = echo(dctx, c2, &echoArgs{SleepMs: 400})
			cancel()
			checkTimeout(t, err, time.Since(start), 300*time.Millisecond)

			// Cancellation. A multiplexed call stops waiting at once; a pooled
			// one at the latest at its deadline (netpoll does not yet end a
			// wait whose deadline changes, see conn.go).
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(30*time.Millisecond, cancel)
			start = time.Now()
			_, err = echo(cctx, c2, &echoArgs{SleepMs: 400}, client.WithCallTimeout(150*time.Millisecond))
			if rpcerr.CodeOf(err) != rpcerr.Canceled || time.Since(start) > 300*time.Millisecond {
				t.Fatalf("canceled call: %v (code %v) after %v", err, rpcerr.CodeOf(err), time.Since(start))
			}
			if res, err := echo(ctx, c2, &echoArgs{Msg: []byte("again")}); err != nil || string(res.Success) != "again" {
				t.Fatalf("call after a cancellation: %v", err)
			}
		})
	}
}

func TestTimeoutTravelsInTTHeader(t *testing.T) {
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s, client.WithRPCTimeout(800*time.Millisecond))
			if _, err := echo(context.Background(), c, &echoArgs{}, client.WithCallTimeout(300*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			v, _ := srv.lastTO.Load().(string)
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 200 || ms > 300 {
				t.Fatalf("the server got RPC timeout %q ms, want the remaining part of 300", v)
			}
		})
	}
}

func TestMetainfoTravels(t *testing.T) {
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s)
			ctx := metainfo.WithValue(context.Background(), "k", "v")
			ctx = metainfo.WithPersistentValue(ctx, "p", "q")
			if _, err := echo(ctx, c, &echoArgs{}); err != nil {
				t.Fatal(err)
			}
			m, _ := srv.lastMI.Load().(map[string]string)
			if m[metainfo.PrefixTransient+"k"] != "v" || m[metainfo.PrefixPersistent+"p"] != "q" {
				t.Fatalf("the server got %v", m)
			}
		})
	}
}

func TestMaxMessageSize(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s, client.WithMaxMessageSize(1024))
			if _, err := echo(context.Background(), c, &echoArgs{Mode: modeHuge, Size: 512}); err != nil {
				t.Fatalf("a reply under the limit: %v", err)
			}
			_, err := echo(context.Background(), c, &echoArgs{Mode: modeHuge, Size: 4096})
			if rpcerr.CodeOf(err) != rpcerr.Protocol || !errors.Is(err, transport.ErrFrameTooLarge) {
				t.Fatalf("a reply over the limit: %v (code %v)", err, rpcerr.CodeOf(err))
			}
			if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("x")}); err != nil {
				t.Fatalf("the call after: %v", err)
			}
		})
	}
}

func TestOneway(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s)
			for range 3 {
				if err := c.Call(context.Background(), "echo", true, &echoArgs{Msg: []byte("fire")}, nil); err != nil {
					t.Fatal(err)
				}
			}
			// A two-way call after them proves they were written first.
			if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * time.Second)
			for srv.oneways.Load() < 3 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := srv.oneways.Load(); n != 3 {
				t.Fatalf("the server read %d oneway requests, want 3", n)
			}
		})
	}
}

func TestMiddlewareSeesRPCInfo(t *testing.T) {
	srv := startServer(t)
	var order []string
	var seen rpcinfo.RPCInfo
	mw := func(name string) endpoint.Middleware {
		return func(next endpoint.Endpoint) endpoint.Endpoint {
			return func(ctx context.Context, req, resp any) error {
				order = append(order, name+">")
				if ri := rpcinfo.FromContext(ctx); ri != nil && name == "outer" {
					seen = *ri
				}
				err := next(ctx, req, resp)
				order = append(order, "<"+name)
				return err
			}
		}
	}
	// The inner middleware derives a context: the call still works.
	type derivedKey struct{}
	derive := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			return next(context.WithValue(ctx, derivedKey{}, 1), req, resp)
		}
	}
	c, err := client.New("Echo", client.WithHostPorts(srv.Addr()),
		client.WithMiddleware(mw("outer"), mw("inner")), client.WithMiddleware(derive),
		client.WithCallerName("tester"),
		client.WithRPCTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(order) != "[outer> inner> <inner <outer]" {
		t.Fatalf("middleware order %v", order)
	}
	if seen.Caller != "tester" || seen.Callee != "Echo" || seen.Method != "echo" || seen.SeqID == 0 || seen.Timeout != time.Second || seen.Protocol != "ttheader" {
		t.Fatalf("rpcinfo in middleware: %+v", seen)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	cases := map[string][]client.Option{
		"no address":         nil,
		"empty address":      {client.WithHostPorts("")},
		"mux over framed":    {client.WithHostPorts("x:1"), client.WithMuxConnection(0), client.WithTransport(transport.Framed)},
		"negative timeout":   {client.WithHostPorts("x:1"), client.WithRPCTimeout(-1)},
		"negative connect":   {client.WithHostPorts("x:1"), client.WithConnectTimeout(-1)},
		"zero message size":  {client.WithHostPorts("x:1"), client.WithMaxMessageSize(0)},
		"bad protocol":       {client.WithHostPorts("x:1"), client.WithTransport(transport.Protocol(9))},
		"negative idle":      {client.WithHostPorts("x:1"), client.WithLongConnection(client.LongPoolConfig{MaxIdlePerAddress: -1})},
		"negative mux conns": {client.WithHostPorts("x:1"), client.WithMuxConnection(-2)},
		"huge mux conns":     {client.WithHostPorts("x:1"), client.WithMuxConnection(client.MaxMuxConnections + 1)},
		"bad network":        {client.WithHostPorts("x:1"), client.WithNetwork("udp")},
		"nil middleware":     {client.WithHostPorts("x:1"), client.WithMiddleware(nil)},
	}
	for name, opts := range cases {
		if c, err := client.New("Echo", opts...); err == nil {
			c.Close()
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := client.New("", client.WithHostPorts("x:1")); err == nil {
		t.Error("New accepted an empty service name")
	}
}

func TestCallAfterClose(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s)
			if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
				t.Fatal(err)
			}
			c.Close()
			_, err := echo(context.Background(), c, &echoArgs{})
			if rpcerr.CodeOf(err) != rpcerr.Connection {
				t.Fatalf("call after Close: %v", err)
			}
		})
	}
}

func TestLongPoolNeverHandsOutDeadConnection(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.Addr(), setup{proto: transport.TTHeader, pool: client.WithLongConnection(client.LongPoolConfig{})})
	ctx := context.Background()
	if _, err := echo(ctx, c, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	if idle := client.IdleConns(c, srv.Addr()); len(idle) != 1 || !idle[0] {
		t.Fatalf("idle connections after a call: %v, want one active", idle)
	}
	srv.CloseConns() // the server closes the pooled connection
	deadline := time.Now().Add(2 * time.Second)
	for {
		idle := client.IdleConns(c, srv.Addr())
		if len(idle) == 0 || (len(idle) == 1 && !idle[0]) {
			break // the client has seen the close (and forgotten the connection)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pooled connection still looks active: %v", idle)
		}
		time.Sleep(time.Millisecond)
	}
	// The dead connection is not handed out: the call dials a new one and
	// succeeds.
	for i := range 5 {
		if _, err := echo(ctx, c, &echoArgs{}); err != nil {
			t.Fatalf("call %d after the server closed the idle connection: %v", i, err)
		}
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Fatalf("%d connections accepted, want 2", n)
	}
}

func TestLongPoolDropsFlaggedAndFailedConnections(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.Addr(), setup{proto: transport.TTHeader, pool: client.WithLongConnection(client.LongPoolConfig{})})
	ctx := context.Background()
	if _, err := echo(ctx, c, &echoArgs{Mode: modeDrop}); err != nil {
		t.Fatal(err)
	}
	if idle := client.IdleConns(c, srv.Addr()); len(idle) != 0 {
		t.Fatalf("a connection the server asked to drop went back to the pool: %v", idle)
	}
	if _, err := echo(ctx, c, &echoArgs{}, client.WithCallTimeout(20*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := echo(ctx, c, &echoArgs{SleepMs: 200}, client.WithCallTimeout(20*time.Millisecond))
	if rpcerr.CodeOf(err) != rpcerr.Timeout {
		t.Fatalf("want a timeout, got %v", err)
	}
	if idle := client.IdleConns(c, srv.Addr()); len(idle) != 0 {
		t.Fatalf("a connection that timed out went back to the pool: %v", idle)
	}
	// An application exception leaves the connection in a known state.
	echo(ctx, c, &echoArgs{Mode: modeAppError})
	if idle := client.IdleConns(c, srv.Addr()); len(idle) != 1 {
		t.Fatalf("idle after an application exception: %v, want 1", idle)
	}
}

func TestLongPoolLimits(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.Addr(), setup{proto: transport.TTHeader, pool: client.WithLongConnection(client.LongPoolConfig{
		MaxIdlePerAddress: 2, MaxIdleTimeout: 100 * time.Millisecond,
	})})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := echo(context.Background(), c, &echoArgs{SleepMs: 50}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if idle := client.IdleConns(c, srv.Addr()); len(idle) != 2 {
		t.Fatalf("idle connections after 8 concurrent calls: %d, want MaxIdlePerAddress 2", len(idle))
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(client.IdleConns(c, srv.Addr())) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle connections outlived MaxIdleTimeout")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLongPoolTinyIdleTimeout: a MaxIdleTimeout far below a millisecond
// still expires idle connections, without the janitor running
// continuously (once per MaxIdleTimeout would be a million times a second).
func TestLongPoolTinyIdleTimeout(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.Addr(), setup{proto: transport.TTHeader, pool: client.WithLongConnection(client.LongPoolConfig{
		MaxIdleTimeout: time.Microsecond,
	})})
	if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(client.IdleConns(c, srv.Addr())) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection outlived MaxIdleTimeout")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := client.LongPoolSweeps(c)
	time.Sleep(100 * time.Millisecond)
	if n := client.LongPoolSweeps(c) - before; n > 5 {
		t.Fatalf("the janitor ran %d times in 100ms", n)
	}
}
