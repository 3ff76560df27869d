package server_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestGoexitAnswersPipelinedRequests: on a Framed or Buffered connection,
// whose requests are served in order on its reader, a handler's
// runtime.Goexit ends the reader and the connection. Requests the client
// sent with the one that exited, read with it, are still answered (with an
// error saying they were not served) before the connection closes, rather
// than dropped without a reply.
func TestGoexitAnswersPipelinedRequests(t *testing.T) {
	for _, traced := range []bool{false, true} {
		var opts []server.Option
		if traced {
			opts = append(opts, server.WithTracer(noopTracer{}))
		}
		t.Run(fmt.Sprintf("traced=%v", traced), func(t *testing.T) { testGoexitAnswersPipelined(t, opts) })
	}
}

func testGoexitAnswersPipelined(t *testing.T, opts []server.Option) {
	s, h, addr := startServer(t, opts...)
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		before := h.calls.Load()
		c := dial(t, addr, p)
		lb := buf.NewLinkBuffer()
		for seq, action := range []string{"echo", "goexit", "echo", "echo"} {
			args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: action, Msg: "m"}}
			if err := transport.WriteMessage(lb, p, &transport.Header{Protocol: p}, "echo", thrift.CALL, int32(seq+1), args); err != nil {
				t.Fatal(err)
			}
		}
		// A oneway request among them gets no answer, as ever.
		if err := transport.WriteMessage(lb, p, &transport.Header{Protocol: p}, "notify", thrift.ONEWAY, 5, &echotest.EchoNotifyArgs{Msg: "n"}); err != nil {
			t.Fatal(err)
		}
		lb.Flush()
		// Followed by half a request: not received, so not answered.
		half := requestBytes(t, p, 6, "half")
		if _, err := c.conn.Write(append(lb.Bytes(), half[:len(half)/2]...)); err != nil {
			t.Fatal(err)
		}
		res := new(echotest.EchoEchoResult)
		if rep, err := c.recv(res); err != nil || rep.seq != 1 || res.Success.GetMsg() != "m" {
			t.Fatalf("%v: first reply %+v %v, want seq 1 echoing m", p, rep, err)
		}
		if rep, err := c.recv(nil); err != nil || rep.seq != 2 || rep.ex == nil || !strings.Contains(rep.ex.Message, "Goexit") {
			t.Fatalf("%v: second reply %+v %v, want seq 2 INTERNAL_ERROR about Goexit", p, rep, err)
		}
		for seq := int32(3); seq <= 4; seq++ {
			rep, err := c.recv(nil)
			if err != nil {
				t.Fatalf("%v: request %d, read with the one whose handler called Goexit, got no reply: %v", p, seq, err)
			}
			if rep.seq != seq || rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionInternalError ||
				!strings.Contains(rep.ex.Message, "not served") || !strings.Contains(rep.ex.Message, "Goexit") {
				t.Fatalf("%v: reply %+v %+v, want seq %d INTERNAL_ERROR saying it was not served", p, rep, rep.ex, seq)
			}
		}
		if _, err := c.recv(nil); err == nil {
			t.Fatalf("%v: the connection is still open after its reader ended", p)
		}
		if n := h.calls.Load() - before; n != 2 {
			t.Fatalf("%v: %d handler calls, want 2 (the requests after the Goexit are not run)", p, n)
		}
		if n := s.Stats().InFlight; n != 0 {
			t.Fatalf("%v: %d requests in flight after the replies", p, n)
		}
	}
}

// goexitNotify is a handler whose oneway Notify calls runtime.Goexit.
type goexitNotify struct{ handler }

func (*goexitNotify) Notify(ctx context.Context, msg string) error {
	runtime.Goexit()
	return nil
}

// TestOnewayGoexitFlushesReplies: a oneway handler that calls
// runtime.Goexit on a Framed or Buffered connection has no reply of its
// own, but the replies written before it on the connection, waiting for
// the reader's flush, are still sent, and the requests after it answered.
func TestOnewayGoexitFlushesReplies(t *testing.T) {
	_, addr := startWith(t, server.New(), &goexitNotify{})
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		c := dial(t, addr, p)
		lb := buf.NewLinkBuffer()
		args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "m"}}
		if err := transport.WriteMessage(lb, p, &transport.Header{Protocol: p}, "echo", thrift.CALL, 1, args); err != nil {
			t.Fatal(err)
		}
		if err := transport.WriteMessage(lb, p, &transport.Header{Protocol: p}, "notify", thrift.ONEWAY, 2, &echotest.EchoNotifyArgs{Msg: "n"}); err != nil {
			t.Fatal(err)
		}
		if err := transport.WriteMessage(lb, p, &transport.Header{Protocol: p}, "echo", thrift.CALL, 3, args); err != nil {
			t.Fatal(err)
		}
		lb.Flush()
		if _, err := c.conn.Write(lb.Bytes()); err != nil {
			t.Fatal(err)
		}
		res := new(echotest.EchoEchoResult)
		if rep, err := c.recv(res); err != nil || rep.seq != 1 || res.Success.GetMsg() != "m" {
			t.Fatalf("%v: the reply written before the oneway Goexit: %+v %v, want seq 1 echoing m", p, rep, err)
		}
		if rep, err := c.recv(nil); err != nil || rep.seq != 3 || rep.ex == nil || !strings.Contains(rep.ex.Message, "not served") {
			t.Fatalf("%v: the request after the oneway Goexit: %+v %v, want seq 3 not served", p, rep, err)
		}
		if _, err := c.recv(nil); err == nil {
			t.Fatalf("%v: the connection is still open after its reader ended", p)
		}
	}
}
