package server_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestPipelinedReplySentBeforeNextHandler checks that on a Framed or
// Buffered connection the reply to a fast request A goes out at once when
// a slow request B (600 ms) follows it in the same write. A's reply used to be
// only queued while the reader went on to run B's handler, and was sent
// with B's when that returned: A's client waited for B's handler.
func TestPipelinedReplySentBeforeNextHandler(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		c := dial(t, addr, p)
		w := c.conn.Writer()
		h := &transport.Header{Protocol: p}
		if err := transport.WriteMessage(w, p, h, "echo", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "A"}}); err != nil {
			t.Fatal(err)
		}
		if err := transport.WriteMessage(w, p, h, "echo", thrift.CALL, 2, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "600ms"}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		c.conn.SetReadTimeout(300 * time.Millisecond)
		rep, err := c.recv(new(echotest.EchoEchoResult))
		if err != nil {
			t.Fatalf("%v: the reply to A (an echo) did not come within 300 ms while B's handler sleeps: %v", p, err)
		}
		if rep.seq != 1 {
			t.Fatalf("%v: first reply seq %d, want 1", p, rep.seq)
		}
		c.conn.SetReadTimeout(3 * time.Second)
		if rep, err = c.recv(new(echotest.EchoEchoResult)); err != nil || rep.seq != 2 {
			t.Fatalf("%v: second reply seq %d, %v; want seq 2", p, rep.seq, err)
		}
		c.conn.Close()
	}
}
