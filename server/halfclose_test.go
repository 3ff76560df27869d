package server_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestHalfClosedClientGetsReplies: a client that sends its requests and
// shuts down its sending side still gets every reply, including those of
// TTHeader calls still running when its close arrives.
func TestHalfClosedClientGetsReplies(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader, transport.Buffered} {
		t.Run(p.String(), func(t *testing.T) {
			lb := buf.NewLinkBuffer()
			const n = 3
			for i := int32(1); i <= n; i++ {
				args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "50ms"}}
				if err := transport.WriteMessage(lb, p, &transport.Header{Protocol: p}, "echo", thrift.CALL, i, args); err != nil {
					t.Fatal(err)
				}
			}
			lb.Flush()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write(lb.Bytes()); err != nil {
				t.Fatal(err)
			}
			conn.(*net.TCPConn).CloseWrite()
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(conn)
			if err != nil {
				t.Fatalf("reading the replies: %v", err)
			}
			if c := bytes.Count(got, []byte("50ms")); c != n {
				t.Fatalf("%d of %d replies arrived before the server closed (%d bytes)", c, n, len(got))
			}
		})
	}
}
