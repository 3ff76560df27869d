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
// header gives the frame's size (0 for Buffered, which declares none), its
// header and the message's name, type and seq; a shorter one gives
// ErrNeedMore.
func TestReadMessageHead(t *testing.T) {
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader, transport.Buffered} {
		for _, payload := range []uint8{transport.PayloadBinary, transport.PayloadCompact} {
			if p == transport.Buffered && payload != transport.PayloadBinary {
				continue // Buffered is binary only
			}
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
				wantSize := uint64(len(frame))
				if p == transport.Buffered {
					wantSize = 0
				}
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
					if err != nil || size != wantSize || name != "method" || typ != thrift.CALL || seq != 4242 ||
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
// them.
func TestReadMessageHeadErrors(t *testing.T) {
	cases := []struct {
		p    transport.Protocol
		b    []byte
		kind error
	}{
		{transport.Protocol(0), []byte{0x80, 1, 0, 1, 0, 0, 0, 0}, transport.ErrUnsupported},
		// Buffered is strict binary only, and reads no further than the
		// header however many bytes follow.
		{transport.Buffered, []byte{0x80, 7, 0, 1}, transport.ErrBadMessage},
		{transport.Buffered, []byte{0, 0, 0, 4, 'e', 'c', 'h', 'o', 1, 0, 0, 0, 9}, transport.ErrBadMessage},
		{transport.Buffered, []byte{0x80, 1, 0, 9, 0, 0, 0, 1, 'm', 0, 0, 0, 9}, transport.ErrBadMessage},
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

// TestRefusedFrameOf: a TTHeader frame refused for its header (an unknown
// info id, a transform, a header size that does not fit or is over the
// limit) gives, besides its error kind, what a reply needs: the frame's
// flags, sequence number and payload protocol, and the message's header
// when the payload can be read; the frames consumed whole say so, and
// those refused from their head leave the reader where it was. A frame
// refused before its protocol id is known gives nothing.
func TestRefusedFrameOf(t *testing.T) {
	lb := buf.NewLinkBuffer()
	h := &transport.Header{Protocol: transport.TTHeader, PayloadProtocol: transport.PayloadCompact, Flags: 0x9}
	if err := transport.WriteMessage(lb, transport.TTHeader, h, "method", thrift.CALL, 4242, headArgs{10}); err != nil {
		t.Fatal(err)
	}
	lb.Flush()
	good := append([]byte(nil), lb.Bytes()...)
	hs := int(binary.BigEndian.Uint16(good[12:])) * 4
	// with returns good with b inserted at offset at of its variable
	// header, and nt as its transform count.
	with := func(at int, nt byte, b ...byte) []byte {
		f := append(append(append([]byte(nil), good[:14+at]...), b...), good[14+at:]...)
		binary.BigEndian.PutUint32(f, uint32(len(f)-4))
		binary.BigEndian.PutUint16(f[12:], uint16((hs+len(b))/4))
		f[15] = nt
		return f
	}
	size := func(n uint16) []byte {
		f := append([]byte(nil), good...)
		binary.BigEndian.PutUint16(f[12:], n)
		return f
	}
	for _, tc := range []struct {
		name    string
		frame   []byte
		kind    error
		whole   bool
		message bool
	}{
		{"unknown info id", with(hs, 0, 0x20, 0, 0, 0), transport.ErrBadFrame, true, true},
		{"string past header", with(hs, 0, 0x01, 0, 1, 0, 9, 0, 0, 0), transport.ErrBadFrame, true, true},
		{"transform", with(2, 1, 3, 0, 0, 0), transport.ErrUnsupported, true, false},
		{"header past frame", size(0x4000), transport.ErrBadFrame, false, false},
		{"header over 64 KiB", size(0x4001), transport.ErrBadFrame, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(how string, err error, whole bool) {
				t.Helper()
				if !errors.Is(err, tc.kind) {
					t.Fatalf("%s: err = %v, want %v", how, err, tc.kind)
				}
				f, ok := transport.RefusedFrameOf(err)
				if !ok || f.Flags != 0x9 || f.SeqID != 4242 || f.PayloadProtocol != transport.PayloadCompact || f.Size != len(tc.frame) || f.Whole != whole {
					t.Fatalf("%s: RefusedFrameOf(%v) = %+v, %v", how, err, f, ok)
				}
				if f.HasMessage != tc.message || (tc.message && (f.Name != "method" || f.Type != thrift.CALL || f.MessageSeqID != 4242)) {
					t.Fatalf("%s: message header %+v, want it: %v", how, f, tc.message)
				}
			}
			r := buf.NewLinkBufferFrom(tc.frame)
			_, err := transport.ReadFrame(r, transport.TTHeader, 1<<20, nil)
			check("ReadFrame", err, tc.whole)
			if left := r.Len(); tc.whole != (left == 0) || !tc.whole && left != len(tc.frame) {
				t.Errorf("ReadFrame left %d of %d bytes", left, len(tc.frame))
			}
			_, _, err = transport.DecodeTTHeader(tc.frame, 1<<20, nil)
			check("DecodeTTHeader", err, tc.whole)
			if !tc.whole {
				// The protocol id has not arrived: nothing to address.
				_, err := transport.ReadFrame(buf.NewLinkBufferFrom(tc.frame[:14]), transport.TTHeader, 1<<20, nil)
				if _, ok := transport.RefusedFrameOf(err); !errors.Is(err, tc.kind) || ok {
					t.Errorf("14 bytes: err = %v, RefusedFrameOf ok %v; want %v and false", err, ok, tc.kind)
				}
			}
		})
	}
	for _, b := range [][]byte{
		{0, 0, 0, 12, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},      // header size 0
		{0, 0, 0, 12, 0x10, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0},      // bad magic
		{0, 0, 0, 10, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0x10, 0, 0, 0},   // header past a frame of 14 bytes
		{0x7f, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0}, // too large
	} {
		_, err := transport.ReadFrame(buf.NewLinkBufferFrom(b), transport.TTHeader, 1<<20, nil)
		if f, ok := transport.RefusedFrameOf(err); err == nil || ok {
			t.Errorf("% x: err %v, RefusedFrameOf = %+v, %v; want an error and false", b, err, f, ok)
		}
	}
}
