package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// oddErrors returns, for Request.Action, an error a handler should not
// return but may: a nil pointer of an error type (the classic
// "func f() *MyErr { return nil }" assigned to error), or an error whose
// Error method panics.
type oddErrors struct{}

// panickyError is an error whose Error method panics.
type panickyError struct{}

func (panickyError) Error() string { panic("Error method bug") }

func (oddErrors) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	switch req.Action {
	case "nil-rpcerr":
		var e *rpcerr.Error
		return nil, e
	case "nil-biz":
		var e *rpcerr.BizStatusError
		return nil, e
	case "nil-appex":
		var e *thrift.ApplicationException
		return nil, e
	case "nil-declared":
		var e *echotest.Oops
		return nil, e
	case "panicky":
		return nil, panickyError{}
	}
	return &echotest.Response{Msg: req.Msg}, nil
}

func (oddErrors) Notify(ctx context.Context, msg string) error { return nil }

// TestOddHandlerErrors: a handler's error that is a nil pointer, or whose
// Error method panics, is answered with INTERNAL_ERROR saying so, over
// every protocol, with a tracer or without; the connection serves on and
// nothing stays in flight.
func TestOddHandlerErrors(t *testing.T) {
	cases := []struct{ action, want string }{
		{"nil-rpcerr", "returned a nil *rpcerr.Error as its error"},
		{"nil-biz", "returned a nil *rpcerr.BizStatusError as its error"},
		{"nil-appex", "returned a nil *thrift.ApplicationException as its error"},
		{"nil-declared", "returned a nil *echotest.Oops as its error"},
		{"panicky", "reading the error (server_test.panickyError) that the handler of Echo.echo returned panicked: Error method bug"},
	}
	for _, traced := range []bool{false, true} {
		var opts []server.Option
		if traced {
			opts = append(opts, server.WithTracer(noopTracer{}))
		}
		s, addr := startWith(t, server.New(opts...), oddErrors{})
		for _, p := range protocols {
			c := dial(t, addr, p)
			c.conn.SetReadTimeout(2 * time.Second)
			for i, tc := range cases {
				seq := int32(2 * i)
				args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: tc.action}}
				if err := c.send("echo", thrift.CALL, seq, args, nil); err != nil {
					t.Fatalf("traced %v, %v, %s: send: %v", traced, p, tc.action, err)
				}
				rep, err := c.recv(new(echotest.EchoEchoResult))
				if err != nil {
					t.Fatalf("traced %v, %v, %s: no reply: %v", traced, p, tc.action, err)
				}
				if rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionInternalError ||
					!strings.Contains(rep.ex.Message, "Echo.echo") || !strings.Contains(rep.ex.Message, tc.want) {
					t.Errorf("traced %v, %v, %s: reply %v %+v, want INTERNAL_ERROR with %q", traced, p, tc.action, rep.typ, rep.ex, tc.want)
				}
				if p == transport.TTHeader && rep.str["biz-status"] != "" {
					t.Errorf("traced %v, %v, %s: biz-status %q", traced, p, tc.action, rep.str["biz-status"])
				}
				if res, _ := c.call(seq+1, "echo", "on", nil); res.Success.GetMsg() != "on" {
					t.Fatalf("traced %v, %v, %s: after the reply: %+v", traced, p, tc.action, res)
				}
			}
			if n := s.Stats().InFlight; n != 0 {
				t.Fatalf("traced %v, %v: %d requests in flight after the replies", traced, p, n)
			}
		}
		if got, want := s.Stats().Panics, int64(len(protocols)); got != want {
			t.Errorf("traced %v: Stats().Panics = %d, want %d (one per panicky Error)", traced, got, want)
		}
	}
}
