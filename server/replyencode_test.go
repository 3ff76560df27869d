package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// overstatedResult announces 8 bytes more than it writes: its encoding
// fails (a hand-written codec's bug).
type overstatedResult struct{ echotest.EchoEchoResult }

func (r *overstatedResult) BLength() int { return r.EchoEchoResult.BLength() + 8 }
func (r *overstatedResult) FastWriteNocopy(b []byte, w thrift.NocopyWriter) int {
	return r.EchoEchoResult.FastWriteNocopy(b, nil)
}

// TestUnencodableReplyAnswered: a reply that cannot be encoded is answered
// with an INTERNAL_ERROR exception saying why, and the connection goes on:
// the calls in flight on it keep their replies, and it serves the next
// call.
func TestUnencodableReplyAnswered(t *testing.T) {
	info := serviceInfo("Echo",
		method("echo", nil, nil, func(args, result thrift.FastCodec) error {
			req := args.(*echotest.EchoEchoArgs).Req
			if req.Action == "sleep" {
				time.Sleep(200 * time.Millisecond)
			}
			result.(*echotest.EchoEchoResult).Success = &echotest.Response{Msg: req.Msg}
			return nil
		}),
		method("bad", nil, func() thrift.FastCodec { return new(overstatedResult) }, func(args, result thrift.FastCodec) error {
			result.(*overstatedResult).Success = &echotest.Response{Msg: "x"}
			return nil
		}))
	addr, stop := serveInfo(t, server.New(), info)
	defer stop(3 * time.Second)
	c := dial(t, addr, transport.TTHeader)
	sleep := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "slept"}}
	if err := c.send("echo", thrift.CALL, 1, sleep, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.send("bad", thrift.CALL, 2, &echotest.EchoEchoArgs{Req: &echotest.Request{}}, nil); err != nil {
		t.Fatal(err)
	}
	got := map[int32]reply{}
	for range 2 {
		rep, err := c.recv(new(echotest.EchoEchoResult))
		if err != nil {
			t.Fatalf("recv after %d replies: %v", len(got), err)
		}
		got[rep.seq] = rep
	}
	if rep := got[1]; rep.typ != thrift.REPLY {
		t.Errorf("the call in flight: %v %v", rep.typ, rep.ex)
	}
	if rep := got[2]; rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionInternalError ||
		!strings.Contains(rep.ex.Message, "could not be encoded") || !strings.Contains(rep.ex.Message, "bad") {
		t.Errorf("the unencodable reply: %v %+v, want INTERNAL_ERROR naming the method", rep.typ, rep.ex)
	}
	if err := c.send("echo", thrift.CALL, 3, &echotest.EchoEchoArgs{Req: &echotest.Request{Msg: "after"}}, nil); err != nil {
		t.Fatal(err)
	}
	res := new(echotest.EchoEchoResult)
	if rep, err := c.recv(res); err != nil || rep.typ != thrift.REPLY || res.Success.GetMsg() != "after" {
		t.Fatalf("after the unencodable reply: %+v, %v", res, err)
	}
}
