package server_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestBadFrameAfterCallsKeepsTheirReplies: on a TTHeader connection, whose
// requests are served concurrently, bytes that end the connection (a bad
// frame, an oversized one, a request that does not arrive whole in the
// read timeout) come after requests that were read and are being served.
// Those are answered before the connection is closed, as Framed and
// Buffered ones are: a client must not take a call the server ran for one
// it did not.
func TestBadFrameAfterCallsKeepsTheirReplies(t *testing.T) {
	cases := []struct {
		name string
		tail func(t *testing.T) []byte
	}{
		{"framed frame", func(t *testing.T) []byte { return requestBytes(t, transport.Framed, 2, "b") }},
		{"oversized frame", func(t *testing.T) []byte {
			return append(binary.BigEndian.AppendUint32(nil, 1<<20), 0x0f, 0xff, 0, 0)
		}},
		{"half a request", func(t *testing.T) []byte {
			b := requestBytes(t, transport.TTHeader, 2, "b")
			return b[:len(b)/2]
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _, addr := startServer(t, server.WithReadTimeout(50*time.Millisecond), server.WithMaxMessageSize(4096))
			c := dial(t, addr, transport.TTHeader)
			lb := buf.NewLinkBuffer()
			args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "300ms"}}
			if err := transport.WriteMessage(lb, transport.TTHeader, &transport.Header{Protocol: transport.TTHeader}, "echo", thrift.CALL, 1, args); err != nil {
				t.Fatal(err)
			}
			lb.Flush()
			if _, err := c.conn.Write(append(lb.Bytes(), tc.tail(t)...)); err != nil {
				t.Fatal(err)
			}
			res := new(echotest.EchoEchoResult)
			rep, err := c.recv(res)
			if err != nil {
				t.Fatalf("the reply to the request read before the bad bytes: %v", err)
			}
			if rep.seq != 1 || res.Success.GetMsg() != "300ms" {
				t.Fatalf("reply %+v %+v, want seq 1 echoing 300ms", rep, res)
			}
			if _, err := c.recv(nil); err == nil {
				t.Fatal("the connection stayed open after the bad bytes")
			}
			deadline := time.Now().Add(5 * time.Second)
			for s.Stats().Connections > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d connections open 5 s after the bad bytes", s.Stats().Connections)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
