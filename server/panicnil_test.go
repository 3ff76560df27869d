package server_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// nilPanicker's Echo panics with a nil value.
type nilPanicker struct{}

func (nilPanicker) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	var err error // a nil error, as in panic(err) after a check gone wrong
	panic(err)
}
func (nilPanicker) Notify(ctx context.Context, msg string) error { return nil }

// TestHandlerPanicNil: a handler that panics with a nil value is answered
// with INTERNAL_ERROR saying it panicked, also in a program whose go.mod
// declares a Go before 1.21, where GODEBUG panicnil=1 makes recover return
// nil for it: the call must not be answered as a success with an empty
// result. The panic is counted.
func TestHandlerPanicNil(t *testing.T) {
	for _, godebug := range []string{"panicnil=0", "panicnil=1"} {
		t.Run(godebug, func(t *testing.T) {
			t.Setenv("GODEBUG", godebug)
			s, addr := startWith(t, server.New(), nilPanicker{})
			c := dial(t, addr, transport.TTHeader)
			res, rep := c.call(1, "echo", "", nil)
			if rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionInternalError ||
				!strings.Contains(rep.ex.Message, "panic in handler Echo.echo") {
				t.Fatalf("a handler's panic(nil) answered with %v %+v %+v, want INTERNAL_ERROR saying it panicked", rep.typ, rep.ex, res)
			}
			if got := s.Stats().Panics; got != 1 {
				t.Errorf("Stats().Panics = %d, want 1", got)
			}
		})
	}
}

// nilPanickyArgs is an argument struct whose decoding panics with nil.
type nilPanickyArgs struct{}

func (*nilPanickyArgs) BLength() int           { return 1 }
func (*nilPanickyArgs) FastWrite(b []byte) int { b[0] = 0; return 1 }
func (*nilPanickyArgs) FastRead(b []byte) (int, error) {
	var err error
	panic(err)
}

// TestArgsDecodingPanicNil: arguments whose decoding panics with nil under
// GODEBUG panicnil=1 are answered as undecodable (PROTOCOL_ERROR) and give
// back their place in flight, as with any other panic value; the handler
// does not run.
func TestArgsDecodingPanicNil(t *testing.T) {
	t.Setenv("GODEBUG", "panicnil=1")
	var ran atomic.Int64
	info := serviceInfo("Panicky",
		method("echo", func() thrift.FastCodec { return new(nilPanickyArgs) }, nil, func(args, result thrift.FastCodec) error {
			ran.Add(1)
			return nil
		}))
	s := server.New()
	addr, stop := serveInfo(t, s, info)
	expectUndecodable(t, s, addr, "panic")
	stop(10 * time.Second)
	if n := ran.Load(); n != 0 {
		t.Errorf("the handler ran %d times with arguments whose decoding panicked", n)
	}
	if n := s.Stats().Panics; n != int64(len(protocols)) {
		t.Errorf("Stats().Panics = %d, want %d", n, len(protocols))
	}
}

// nilPanickyResult is a result whose encoding panics with nil.
type nilPanickyResult struct{}

func (nilPanickyResult) BLength() int { return 1 }
func (nilPanickyResult) FastWrite(b []byte) int {
	var err error
	panic(err)
}
func (nilPanickyResult) FastRead(b []byte) (int, error) { return 0, nil }

// nilPanickyError is an error whose Error method panics with nil.
type nilPanickyError struct{}

func (nilPanickyError) Error() string {
	var err error
	panic(err)
}

// TestReplyPanicNil: under GODEBUG panicnil=1, a reply whose encoding
// panics with nil closes the connection, as with any other panic value,
// rather than sending a frame the codec left half written; and a handler's
// error whose Error method panics with nil is answered with INTERNAL_ERROR
// saying so, the connection serving on.
func TestReplyPanicNil(t *testing.T) {
	t.Setenv("GODEBUG", "panicnil=1")
	info := serviceInfo("Panicky",
		method("echo", nil, func() thrift.FastCodec { return nilPanickyResult{} }, nil),
		method("fail", nil, nil, func(args, result thrift.FastCodec) error { return nilPanickyError{} }))
	s := server.New()
	addr, stop := serveInfo(t, s, info)
	for _, p := range protocols {
		c := dial(t, addr, p)
		c.conn.SetReadTimeout(3 * time.Second)
		for seq := int32(0); seq < 2; seq++ {
			if err := c.send("fail", thrift.CALL, seq, echotest.NewEchoEchoArgs(), nil); err != nil {
				t.Fatal(err)
			}
			rep, err := c.recv(nil)
			if err != nil || rep.ex == nil || rep.ex.Type != thrift.ExceptionInternalError || !strings.Contains(rep.ex.Message, "panicked: a nil value") {
				t.Fatalf("%v: a handler's error whose Error panics with nil: %+v %v", p, rep.ex, err)
			}
		}
		if err := c.send("echo", thrift.CALL, 2, echotest.NewEchoEchoArgs(), nil); err != nil {
			t.Fatal(err)
		}
		if rep, err := c.recv(nil); err == nil {
			t.Errorf("%v: a reply whose encoding panicked with nil: %+v", p, rep)
		}
	}
	stop(10 * time.Second)
	if n, want := s.Stats().Panics, int64(3*len(protocols)); n != want {
		t.Errorf("Stats().Panics = %d, want %d", n, want)
	}
}
