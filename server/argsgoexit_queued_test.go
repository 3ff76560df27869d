package server_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestArgsGoexitKeepsQueuedReplies: on a Framed or Buffered connection,
// two pipelined requests arrive in one write: "echo" (served; its reply is
// queued, to go out with the next flush) and "bad", whose arguments' codec
// calls runtime.Goexit on the reader (goexitArgs, safety_test.go). The
// reader's goroutine ended without flushing what was queued, so the reply
// of the echo call, whose handler ran, never left: the client saw the
// connection closed for a call the server served. Queued replies now go
// before a request's arguments are decoded (as a handler's Goexit flushes
// them first: answerUnserved).
func TestArgsGoexitKeepsQueuedReplies(t *testing.T) {
	var ran atomic.Int64
	info := serviceInfo("G",
		method("bad", func() thrift.FastCodec { return new(goexitArgs) }, nil, nil),
		method("echo", nil, nil, func(args, result thrift.FastCodec) error {
			ran.Add(1)
			result.(*echotest.EchoEchoResult).Success = &echotest.Response{Msg: "ok"}
			return nil
		}))
	addr, stop := serveInfo(t, server.New(), info)
	defer stop(5 * time.Second)
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		lb := buf.NewLinkBuffer()
		transport.WriteMessage(lb, p, nil, "echo", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{}})
		transport.WriteMessage(lb, p, nil, "bad", thrift.CALL, 2, &echotest.EchoEchoArgs{Req: &echotest.Request{}})
		lb.Flush()
		b, _ := lb.Next(lb.Len())
		c := dial(t, addr, p)
		c.conn.SetReadTimeout(3 * time.Second)
		w := c.conn.Writer()
		w.WriteBinary(append([]byte(nil), b...))
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		lb.Release()
		res := new(echotest.EchoEchoResult)
		rep, err := c.recv(res)
		if err != nil || rep.seq != 1 || res.Success == nil {
			t.Errorf("%v: the echo call (seq 1), served (handler runs: %d), got %+v, %v; want its reply before the connection closes", p, ran.Load(), rep, err)
		}
		if _, err := c.recv(nil); !errors.Is(err, netpoll.ErrPeerClosed) && !errors.Is(err, netpoll.ErrConnReset) {
			t.Errorf("%v: after it: %v; want the connection closed", p, err)
		}
	}
}
