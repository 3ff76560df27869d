package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// startSlowReader starts a server of TTHeader echo calls that reads its
// input slowly (64 KiB every 2 ms, about 30 MB/s) and answers each with
// "ok".
func startSlowReader(t *testing.T) *rawServer {
	return startRawServer(t, func(_ *rawServer, _ int32, conn net.Conn) {
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetReadBuffer(64 << 10)
		}
		in := buf.NewLinkBuffer()
		chunk := make([]byte, 64<<10)
		for {
			n, err := conn.Read(chunk)
			if n > 0 {
				in.Write(chunk[:n])
			}
			if err != nil {
				return
			}
			time.Sleep(2 * time.Millisecond)
			var h transport.Header
			_, _, seq, _, err := transport.ReadMessage(in, transport.TTHeader, 64<<20, &h)
			if err != nil {
				continue // the frame is not whole yet
			}
			in.Release()
			out := buf.NewLinkBuffer()
			res := &echoResult{Success: []byte("ok"), HasSuccess: true}
			rh := transport.Header{SeqID: seq}
			if transport.WriteMessage(out, transport.TTHeader, &rh, "echo", thrift.REPLY, seq, res) != nil {
				return
			}
			out.Flush()
			if _, err := conn.Write(out.Bytes()); err != nil {
				return
			}
		}
	})
}

// TestFlushBoundByCallTimeout: a call given 5 s by WithCallTimeout (which
// replaces the client's RPC timeout for the call) sends an 8 MiB request
// to a server that reads it in a few hundred ms. Every pool must deliver
// the reply. The multiplexed pool bounded its flush by the client-wide
// WithRPCTimeout (50 ms) whatever the call's own timeout, and failed the
// connection, and every call on it, with a Connection error.
func TestFlushBoundByCallTimeout(t *testing.T) {
	srv := startSlowReader(t)
	msg := make([]byte, 8<<20)
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, srv.addr(), s, client.WithRPCTimeout(50*time.Millisecond))
			start := time.Now()
			res, err := echo(context.Background(), c, &echoArgs{Msg: msg}, client.WithCallTimeout(5*time.Second))
			if err != nil || string(res.Success) != "ok" {
				t.Fatalf("after %v: %v, want the reply (the call's timeout is 5s)", time.Since(start).Round(time.Millisecond), err)
			}
		})
	}
}
