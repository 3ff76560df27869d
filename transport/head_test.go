package transport_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// headArgs is a message body of n bytes (a binary field).
type headArgs struct{ n int }

func (a headArgs) BLength() int                          { return a.n }
func (a headArgs) FastWrite(b []byte) int                { return copy(b, strings.Repeat("b", a.n)) }
func (a headArgs) FastRead(b []byte) (int, error)        { return len(b), nil }
func (a headArgs) BLengthCompact() int                   { return a.n }
func (a headArgs) FastWriteCompact(b []byte) int         { return a.FastWrite(b) }
func (a headArgs) FastReadCompact(b []byte) (int, error) { return len(b), nil }

// TestReadMessageHead: every prefix of a frame that holds its message
// header gives the frame's size, its header and the message's name, type
// and seq; a shorter one gives ErrNeedMore.
func TestReadMessageHead(t *testing.T) {
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader} {
		for _, payload := range []uint8{transport.PayloadBinary, transport.PayloadCompact} {
			t.Run(fmt.Sprintf("%v/%d", p, payload), func(t *testing.T) {
				h := &transport.Header{Protocol: p, PayloadProtocol: payload}
				if p == transport.TTHeader {
					h.Flags = 0x1
					h.SetInt(transport.KeyToService, "svc")
				}
				lb := buf.NewLinkBuffer()
				if err := transport.WriteMessage(lb, p, h, "method", thrift.CALL, 4242, headArgs{1000}); err != nil {
					t.Fatal(err)
				}
				lb.Flush()
				frame := append([]byte(nil), lb.Bytes()...)
				headEnd := -1
				for n := 0; n <= len(frame); n++ {
					var got transport.Header
					size, name, typ, seq, err := transport.ReadMessageHead(frame[:n], p, &got)
					if err == transport.ErrNeedMore {
						if headEnd >= 0 {
							t.Fatalf("%d bytes: ErrNeedMore after %d sufficed", n, headEnd)
						}
						continue
					}
					if headEnd < 0 {
						headEnd = n
					}
					if err != nil || size != uint64(len(frame)) || name != "method" || typ != thrift.CALL || seq != 4242 ||
						got.SeqID != 4242 || got.PayloadProtocol != payload || got.Protocol != p {
						t.Fatalf("%d bytes: %d %q %v %d %+v, %v", n, size, name, typ, seq, got, err)
					}
					if p == transport.TTHeader && (got.Flags != 1 || got.IntInfo[transport.KeyToService] != "svc") {
						t.Fatalf("%d bytes: header %+v", n, got)
					}
				}
				if headEnd < 0 || headEnd > len(frame)-1000 {
					t.Fatalf("the head was read from %d bytes of a %d-byte frame with a 1000-byte body", headEnd, len(frame))
				}
			})
		}
	}
}

// TestReadMessageHeadTTHeaderFramed: the 4-byte length Kitex's
// TTHeaderFramed puts before the message is skipped.
func TestReadMessageHeadTTHeaderFramed(t *testing.T) {
	lb := buf.NewLinkBuffer()
	msg := thrift.Binary.MessageBeginLength("m") + 10
	inner := make([]byte, 4+msg)
	binary.BigEndian.PutUint32(inner, uint32(msg))
	thrift.Binary.WriteMessageBegin(inner[4:], "m", thrift.CALL, 9)
	b, err := transport.BeginFrame(lb, transport.TTHeader, &transport.Header{SeqID: 9}, len(inner))
	if err != nil {
		t.Fatal(err)
	}
	copy(b, inner)
	lb.Flush()
	frame := lb.Bytes()
	size, name, _, seq, err := transport.ReadMessageHead(frame[:len(frame)-10], transport.TTHeader, nil)
	if err != nil || size != uint64(len(frame)) || name != "m" || seq != 9 {
		t.Fatalf("%d %q %d, %v", size, name, seq, err)
	}
}

// TestReadMessageHeadErrors: bad bytes are refused as ReadFrame refuses
// them; Buffered has no size.
func TestReadMessageHeadErrors(t *testing.T) {
	cases := []struct {
		p    transport.Protocol
		b    []byte
		kind error
	}{
		{transport.Buffered, []byte{0x80, 1, 0, 1, 0, 0, 0, 0}, transport.ErrUnsupported},
		{transport.Framed, []byte{0x80, 0, 0, 0, 0x80, 1}, transport.ErrBadFrame},
		{transport.Framed, []byte{0, 0, 0, 0}, transport.ErrBadFrame},
		// The whole frame is there: a bad version is a bad message.
		{transport.Framed, []byte{0, 0, 0, 8, 0x80, 7, 0, 1, 0, 0, 0, 0}, transport.ErrBadMessage},
		{transport.TTHeader, []byte{0, 0, 0, 20, 0x0f, 0xff, 0, 0, 0, 0, 0, 1, 0, 1}, transport.ErrBadFrame},
		{transport.TTHeader, []byte{0, 0, 0, 20, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 5, 0}, transport.ErrUnsupported},
	}
	for i, c := range cases {
		if _, _, _, _, err := transport.ReadMessageHead(c.b, c.p, nil); !errors.Is(err, c.kind) {
			t.Errorf("case %d: err = %v, want %v", i, err, c.kind)
		}
	}
}
