package server_test

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// fixedHandler answers every echo with one shared response, so that the
// benchmark counts the server's allocations and not the handler's.
type fixedHandler struct{ resp *echotest.Response }

func (h *fixedHandler) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	return h.resp, nil
}
func (h *fixedHandler) Notify(ctx context.Context, msg string) error { return nil }

// encodeRequest returns one whole request frame (about 1 KiB of payload).
func encodeRequest(tb testing.TB, p transport.Protocol) []byte {
	lb := buf.NewLinkBuffer()
	h := &transport.Header{Protocol: p}
	if p == transport.TTHeader {
		h.SetInt(transport.KeyToService, "Echo")
		h.SetInt(transport.KeyToMethod, "echo")
		h.SetInt(transport.KeyRPCTimeout, "1000")
	}
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: strings.Repeat("m", 1000)}}
	if err := transport.WriteMessage(lb, p, h, "echo", thrift.CALL, 1, args); err != nil {
		tb.Fatal(err)
	}
	lb.Flush()
	return lb.Bytes()
}

// BenchmarkServerEcho measures one request and its reply over a loopback
// connection. The client writes a pre-encoded frame and reads the reply
// frame without decoding it: it allocates nothing, so allocs/op are the
// server's.
func BenchmarkServerEcho(b *testing.B) {
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader} {
		b.Run(p.String(), func(b *testing.B) {
			s := server.New()
			h := &fixedHandler{resp: &echotest.Response{Action: "echo", Msg: strings.Repeat("r", 1000)}}
			_, addr := startWith(b, s, h)
			c := dial(b, addr, p)
			c.conn.SetReadTimeout(0) // a read timer would be the client's allocation
			req := encodeRequest(b, p)
			w, r := c.conn.Writer(), c.conn.Reader()
			roundTrip := func() {
				m, _ := w.Malloc(len(req))
				copy(m, req)
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
				l, err := r.Next(4)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Skip(int(binary.BigEndian.Uint32(l))); err != nil {
					b.Fatal(err)
				}
				r.Release()
			}
			for i := 0; i < 1000; i++ {
				roundTrip()
			}
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				roundTrip()
			}
		})
	}
}

// BenchmarkServerEchoPipelined sends requests in batches of 16 on one
// connection before reading the replies (as a multiplexing client does):
// TTHeader requests are served concurrently and their replies flushed
// together; Framed ones in order. One op is one request.
func BenchmarkServerEchoPipelined(b *testing.B) {
	const batch = 16
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader} {
		b.Run(p.String(), func(b *testing.B) {
			s := server.New()
			h := &fixedHandler{resp: &echotest.Response{Action: "echo", Msg: strings.Repeat("r", 1000)}}
			_, addr := startWith(b, s, h)
			c := dial(b, addr, p)
			c.conn.SetReadTimeout(0)
			req := encodeRequest(b, p)
			w, r := c.conn.Writer(), c.conn.Reader()
			round := func(n int) {
				for i := 0; i < n; i++ {
					m, _ := w.Malloc(len(req))
					copy(m, req)
				}
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
				for i := 0; i < n; i++ {
					l, err := r.Next(4)
					if err != nil {
						b.Fatal(err)
					}
					if err := r.Skip(int(binary.BigEndian.Uint32(l))); err != nil {
						b.Fatal(err)
					}
				}
				r.Release()
			}
			for i := 0; i < 100; i++ {
				round(batch)
			}
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				round(min(batch, b.N-done))
			}
		})
	}
}
