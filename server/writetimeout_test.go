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

// TestUnreadRepliesCloseConnection: a client that pipelines requests and
// never reads their replies fills the socket; the goroutine writing the
// replies must not wait for it for good (it is one of the server's pool,
// which a few such clients would otherwise exhaust). With the default
// options the connection is closed within DefaultWriteTimeout of the
// socket filling up.
func TestUnreadRepliesCloseConnection(t *testing.T) {
	s, _, addr := startServer(t)
	c := dial(t, addr, transport.Framed)
	big := strings.Repeat("x", 1<<20)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: big}}
		for seq := int32(0); seq < 32; seq++ {
			if c.send("echo", thrift.CALL, seq, args, nil) != nil {
				return // the server closed the connection
			}
		}
	}()
	deadline := time.Now().Add(server.DefaultWriteTimeout + 5*time.Second)
	for s.Stats().Connections > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a connection whose client reads no reply is still open %v after it began (%d requests read)",
				server.DefaultWriteTimeout+5*time.Second, s.Stats().Requests)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.conn.Close()
	<-sent
	// The server goes on serving others.
	if res, _ := dial(t, addr, transport.TTHeader).call(1, "echo", "after", nil); res.Success.GetMsg() != "after" {
		t.Fatalf("after the unread connection was closed: %+v", res)
	}
}
