package client_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

// echoServiceInfo describes the test service for Petrel's server, as the
// generator would.
var echoServiceInfo = &thrift.ServiceInfo{
	Name: "Echo",
	Methods: []thrift.MethodInfo{{
		Name:      "echo",
		NewArgs:   func() thrift.FastCodec { return new(echoArgs) },
		NewResult: func() thrift.FastCodec { return new(echoResult) },
		Handler: func(ctx context.Context, handler any, args, result thrift.FastCodec) error {
			return handler.(*petrelEcho).echo(ctx, args.(*echoArgs), result.(*echoResult))
		},
	}},
}

// petrelEcho answers "echo" on Petrel's server as the test server does
// (modes that need the raw connection are not supported).
type petrelEcho struct {
	calls atomic.Int32
}

func (e *petrelEcho) echo(ctx context.Context, args *echoArgs, res *echoResult) error {
	e.calls.Add(1)
	if args.SleepMs > 0 {
		t := time.NewTimer(time.Duration(args.SleepMs) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done(): // the deadline the client sent in TTHeader
			return rpcerr.Wrap(rpcerr.Timeout, ctx.Err(), "echo handler")
		}
	}
	switch args.Mode {
	case modeAppError:
		return thrift.NewApplicationException(thrift.ExceptionInternalError, "handler failed")
	case modeBiz:
		return rpcerr.NewBizStatusError(1001, "no stock").SetExtra("sku", "42")
	case modeDeclared:
		res.Err = &oops{Why: "declared"}
		return nil
	}
	res.Success, res.HasSuccess = append(res.Success[:0], args.Msg...), true
	return nil
}

func startPetrel(tb testing.TB, opts ...server.Option) (*server.Server, string) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := server.New(append([]server.Option{server.WithListener(ln)}, opts...)...)
	if err := s.RegisterService(echoServiceInfo, &petrelEcho{}); err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Stop(ctx)
		<-done
	})
	return s, ln.Addr().String()
}

func TestAgainstPetrelServer(t *testing.T) {
	_, addr := startPetrel(t)
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, addr, s)
			ctx := context.Background()
			for i := range 10 {
				msg := []byte{'m', byte('0' + i)}
				res, err := echo(ctx, c, &echoArgs{Msg: msg})
				if err != nil || string(res.Success) != string(msg) {
					t.Fatalf("call %d: %v %+v", i, err, res)
				}
			}
			_, err := echo(ctx, c, &echoArgs{Mode: modeAppError})
			var ae *thrift.ApplicationException
			if rpcerr.CodeOf(err) != rpcerr.Application || !errors.As(err, &ae) {
				t.Fatalf("application exception: %v", err)
			}
			err = c.Call(ctx, "nope", false, &echoArgs{}, new(echoResult))
			if !errors.As(err, &ae) || ae.Type != thrift.ExceptionUnknownMethod {
				t.Fatalf("unknown method: %v", err)
			}
			var o *oops
			if _, err := echo(ctx, c, &echoArgs{Mode: modeDeclared}); !errors.As(err, &o) {
				t.Fatalf("declared exception: %v", err)
			}
			_, err = echo(ctx, c, &echoArgs{Mode: modeBiz})
			var biz *rpcerr.BizStatusError
			if s.proto == transport.TTHeader {
				if !errors.As(err, &biz) || biz.StatusCode != 1001 || biz.Extra["sku"] != "42" {
					t.Fatalf("business status: %v", err)
				}
			} else if rpcerr.CodeOf(err) != rpcerr.Application {
				t.Fatalf("business status without TTHeader: %v, want an application exception", err)
			}
			start := time.Now()
			_, err = echo(ctx, c, &echoArgs{SleepMs: 300}, client.WithCallTimeout(30*time.Millisecond))
			checkTimeout(t, err, time.Since(start), 250*time.Millisecond)
			if _, err := echo(ctx, c, &echoArgs{Msg: []byte("x")}); err != nil {
				t.Fatalf("after a timeout: %v", err)
			}
			if err := c.Call(ctx, "echo", true, &echoArgs{}, nil); err != nil {
				t.Fatalf("oneway: %v", err)
			}
		})
	}
}

// TestPetrelStopDropsPooledConnections: replies written while the server
// stops carry its drop flag; the pools do not keep those connections.
func TestPetrelStopDropsPooledConnections(t *testing.T) {
	for _, s := range ttheaderSetups() {
		if s.name[:5] == "short" {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			srv, addr := startPetrel(t)
			c := newClient(t, addr, s, client.WithRPCTimeout(5*time.Second))
			ctx := context.Background()
			if _, err := echo(ctx, c, &echoArgs{}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				if _, err := echo(ctx, c, &echoArgs{SleepMs: 200, Msg: []byte("last")}); err != nil {
					t.Errorf("the call in flight during Stop: %v", err)
				}
			})
			time.Sleep(50 * time.Millisecond)
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := srv.Stop(sctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if idle := client.IdleConns(c, addr); len(idle) != 0 {
				t.Fatalf("the long pool kept a connection the server dropped: %v", idle)
			}
			deadline := time.Now().Add(2 * time.Second)
			for client.MuxConns(c) != 0 {
				if time.Now().After(deadline) {
					t.Fatal("the mux pool still reads a connection the server dropped")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

func TestPetrelOverloadedIsClassified(t *testing.T) {
	_, addr := startPetrel(t, server.WithMaxQPS(1))
	c := newClient(t, addr, setups()[1]) // long/ttheader
	var overloaded int
	for range 20 {
		_, err := echo(context.Background(), c, &echoArgs{})
		switch rpcerr.CodeOf(err) {
		case rpcerr.OK:
		case rpcerr.Overloaded:
			overloaded++
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Temporary() {
				t.Fatalf("an overloaded error is not temporary: %v", err)
			}
		default:
			t.Fatalf("unexpected %v", err)
		}
	}
	if overloaded == 0 {
		t.Fatal("20 calls at once to a server allowing 1 QPS: none refused")
	}
}
