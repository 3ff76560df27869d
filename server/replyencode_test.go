package server_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestUnencodableReplyAnswered: a reply that cannot be encoded, here a
// business status whose message does not fit a TTHeader string (64 KiB),
// is answered with an INTERNAL_ERROR exception saying why, and the
// connection goes on: the calls in flight on it keep their replies, and it
// serves the next call.
func TestUnencodableReplyAnswered(t *testing.T) {
	_, _, addr := startServer(t)
	c := dial(t, addr, transport.TTHeader)
	sleep := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "200ms"}}
	if err := c.send("echo", thrift.CALL, 1, sleep, nil); err != nil {
		t.Fatal(err)
	}
	huge := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "biz", Msg: strings.Repeat("x", 70000)}}
	if err := c.send("echo", thrift.CALL, 2, huge, nil); err != nil {
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
		!strings.Contains(rep.ex.Message, "echo") || !strings.Contains(rep.ex.Message, "biz-message") {
		t.Errorf("the unencodable reply: %v %+v, want INTERNAL_ERROR naming the method and the header value", rep.typ, rep.ex)
	}
	if res, _ := c.call(3, "echo", "after", nil); res.Success.GetMsg() != "after" {
		t.Fatalf("after the unencodable reply: %+v", res)
	}
}
