package transport_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// roundTrip writes a message in protocol p with header out, reads it back
// with ReadMessage and checks everything.
func roundTrip(t *testing.T, p transport.Protocol, out *transport.Header, in *transport.Header) {
	t.Helper()
	lb := buf.NewLinkBuffer()
	defer lb.Reset()
	req := &echo{Text: "hello", Nums: []int32{1, 2, 3}}
	if err := transport.WriteMessage(lb, p, out, "Echo", thrift.CALL, 77, req); err != nil {
		t.Fatalf("WriteMessage: %v", err)
	}
	if err := lb.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := transport.DetectReader(lb)
	if err != nil || got != p {
		t.Fatalf("DetectReader = %v, %v; want %v", got, err, p)
	}
	name, typ, seq, body, err := transport.ReadMessage(lb, p, 0, in)
	if err != nil {
		t.Fatalf("ReadMessage: %v", err)
	}
	if name != "Echo" || typ != thrift.CALL || seq != 77 {
		t.Fatalf("message %q %v %d", name, typ, seq)
	}
	var dec echo
	var n int
	if in.PayloadProtocol == transport.PayloadCompact {
		n, err = dec.FastReadCompact(body)
	} else {
		n, err = dec.FastRead(body)
	}
	if err != nil || n != len(body) {
		t.Fatalf("FastRead = %d, %v; body %d bytes", n, err, len(body))
	}
	if dec.Text != req.Text || !slices.Equal(dec.Nums, req.Nums) {
		t.Fatalf("decoded %+v, want %+v", dec, req)
	}
	if in.Protocol != p || in.SeqID != 77 {
		t.Fatalf("header %+v", in)
	}
	if lb.Len() != 0 {
		t.Fatalf("%d bytes left", lb.Len())
	}
	lb.Release()
}

func TestFramedRoundTrip(t *testing.T) {
	var in transport.Header
	roundTrip(t, transport.Framed, nil, &in)
	roundTrip(t, transport.Framed, &transport.Header{PayloadProtocol: transport.PayloadCompact}, &in)
	if in.PayloadProtocol != transport.PayloadCompact {
		t.Fatalf("compact framed payload read as protocol %d", in.PayloadProtocol)
	}
}

func TestFramedTooLarge(t *testing.T) {
	frame := []byte{0x7f, 0xff, 0xff, 0xff, 0x80, 0x01, 0x00, 0x01, 0, 0}
	lb := buf.NewLinkBufferFrom(frame)
	_, err := transport.ReadFrame(lb, transport.Framed, 1<<20, nil)
	if !errors.Is(err, transport.ErrFrameTooLarge) || rpcerr.CodeOf(err) != rpcerr.Protocol {
		t.Fatalf("err = %v", err)
	}
	if lb.Len() != len(frame) {
		t.Fatalf("a rejected frame consumed %d bytes", len(frame)-lb.Len())
	}
}
