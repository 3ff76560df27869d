package transport_test

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/transport"
)

// TestNetpollLoopback runs an echo server on a real netpoll event loop and
// sends it requests in every protocol over loopback, each written in small
// pieces with pauses so that the server's reads block mid-frame.
func TestNetpollLoopback(t *testing.T) {
	onRequest := func(_ context.Context, c netpoll.Connection) error {
		r, w := c.Reader(), c.Writer()
		p, err := transport.DetectReader(r)
		if err != nil {
			return err
		}
		var h transport.Header
		name, _, seq, body, err := transport.ReadMessage(r, p, 0, &h)
		if err != nil {
			return err
		}
		var req echo
		if _, err := req.FastRead(body); err != nil {
			return err
		}
		out := transport.Header{}
		if p == transport.TTHeader {
			out.SetInt(transport.KeyToMethod, h.IntInfo[transport.KeyToMethod])
		}
		err = transport.WriteMessage(w, p, &out, name, thrift.REPLY, seq, &req)
		r.Release()
		if err != nil {
			return err
		}
		return w.Flush()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	loop, err := netpoll.NewEventLoop(netpoll.Config{OnRequest: onRequest, ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- loop.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := loop.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered, transport.TTHeader} {
		conn, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetReadTimeout(5 * time.Second)
		for i := range 3 {
			req := &echo{Text: "hello over " + p.String(), Nums: make([]int32, 100*i)}
			h := &transport.Header{}
			h.SetInt(transport.KeyToMethod, "Echo")
			// Encode into a scratch connection-independent buffer, then
			// send it in pieces.
			var scratch = newScratch()
			if err := transport.WriteMessage(scratch, p, h, "Echo", thrift.CALL, int32(i+1), req); err != nil {
				t.Fatal(err)
			}
			scratch.Flush()
			b := scratch.Bytes()
			for len(b) > 0 {
				k := min(7, len(b))
				if _, err := conn.Write(b[:k]); err != nil {
					t.Fatal(err)
				}
				b = b[k:]
				time.Sleep(time.Millisecond)
			}
			var in transport.Header
			name, typ, seq, body, err := transport.ReadMessage(conn.Reader(), p, 0, &in)
			if err != nil {
				t.Fatalf("%v: reply: %v", p, err)
			}
			var resp echo
			if _, err := resp.FastRead(body); err != nil {
				t.Fatal(err)
			}
			if name != "Echo" || typ != thrift.REPLY || seq != int32(i+1) || resp.Text != req.Text || !slices.Equal(resp.Nums, req.Nums) {
				t.Fatalf("%v: reply %q %v %d %+v", p, name, typ, seq, resp)
			}
			if p == transport.TTHeader && in.IntInfo[transport.KeyToMethod] != "Echo" {
				t.Fatalf("reply header %+v", in)
			}
			conn.Reader().Release()
		}
		conn.Close()
	}
}
