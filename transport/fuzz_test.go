package transport_test

import (
	"bytes"
	"errors"
	"maps"
	"runtime"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// allocBudget is how much decoding n bytes may allocate: the header maps
// cost a few times the bytes of their entries, never megabytes for a short
// input whatever length it declares.
func allocBudget(n int) uint64 { return uint64(32*n + 64<<10) }

// allocated runs f and returns about the bytes it allocated (anything else
// running in the process counts too, which only makes the check stricter).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// FuzzTTHeaderDecode decodes arbitrary bytes as a TTHeader frame. It must
// never panic; what decodes must encode again to a frame that decodes to the
// same header and payload.
func FuzzTTHeaderDecode(f *testing.F) {
	f.Add(ttVector)
	f.Add([]byte{0, 0, 0, 24, 0x10, 0, 0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 0x11, 0, 2, 'a', 'b', 0, 0, 0, 9, 9})
	f.Add([]byte{0, 0, 0, 12, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1, 2, 0, 0, 0})
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		var h transport.Header
		var payload []byte
		var n int
		var err error
		used := allocated(func() { payload, n, err = transport.DecodeTTHeader(data, 1<<20, &h) })
		if used > allocBudget(len(data)) {
			t.Fatalf("DecodeTTHeader allocated %d bytes for %d input bytes", used, len(data))
		}
		if err != nil {
			return
		}
		if n > len(data) || len(payload) > n {
			t.Fatalf("n %d payload %d of %d bytes", n, len(payload), len(data))
		}
		lb := buf.NewLinkBuffer()
		defer lb.Reset()
		room, err := transport.BeginFrame(lb, transport.TTHeader, &h, len(payload))
		if err != nil {
			t.Fatalf("re-encoding a decoded header: %v", err)
		}
		copy(room, payload)
		lb.Flush()
		var h2 transport.Header
		p2, _, err := transport.DecodeTTHeader(lb.Bytes(), 1<<20, &h2)
		if err != nil {
			t.Fatalf("decoding the re-encoded frame: %v", err)
		}
		if !bytes.Equal(p2, payload) || h2.SeqID != h.SeqID || h2.Flags != h.Flags ||
			h2.PayloadProtocol != h.PayloadProtocol || h2.ACLToken != h.ACLToken ||
			!maps.Equal(h2.IntInfo, h.IntInfo) || !maps.Equal(h2.StrInfo, h.StrInfo) {
			t.Fatalf("round trip changed the header:\n%+v\n%+v", h, h2)
		}
	})
}

// FuzzDetect checks that Detect never panics, never needs more than
// DetectLen bytes, and that more bytes never change a decision.
func FuzzDetect(f *testing.F) {
	f.Add([]byte{0x80, 0x01, 0, 1})
	f.Add([]byte{0, 0, 0, 9, 0x10, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 9, 0x80, 0x01, 0, 1})
	f.Add([]byte{0, 0, 0, 9, 0x82, 0x21})
	f.Add([]byte{0, 0, 0, 9, 0x0f, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := transport.Detect(data)
		if len(data) >= transport.DetectLen && errors.Is(err, transport.ErrNeedMore) {
			t.Fatalf("ErrNeedMore with %d bytes", len(data))
		}
		if err == nil && (p < transport.Framed || p > transport.TTHeader) {
			t.Fatalf("protocol %d without an error", p)
		}
		for i := range min(len(data), transport.DetectLen+1) {
			q, e := transport.Detect(data[:i])
			if errors.Is(e, transport.ErrNeedMore) {
				continue
			}
			if q != p || (e == nil) != (err == nil) {
				t.Fatalf("Detect of %d bytes = %v, %v; of %d bytes = %v, %v", i, q, e, len(data), p, err)
			}
		}
	})
}

// FuzzReadFrame reads arbitrary bytes in each protocol, from a LinkBuffer
// holding them all and from a blocking reader delivering them in chunks: it
// must never panic, both must agree, and a Buffered message must end where
// codec/thrift's Skip says.
func FuzzReadFrame(f *testing.F) {
	f.Add(uint8(transport.TTHeader), uint8(3), ttVector)
	f.Add(uint8(transport.Buffered), uint8(1), nestedMessage(2))
	f.Add(uint8(transport.Buffered), uint8(7), nestedMessage(0)[:40])
	framed := append([]byte{0, 0, 0, 0}, nestedMessage(1)...)
	framed[3] = byte(len(framed) - 4)
	f.Add(uint8(transport.Framed), uint8(5), framed)
	f.Add(uint8(transport.Framed), uint8(5), []byte{0x7f, 0xff, 0xff, 0xfa, 0x80, 0x01, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, proto, chunk uint8, data []byte) {
		p := transport.Protocol(proto%3 + 1)
		const maxSize = 1 << 16
		lb := buf.NewLinkBufferFrom(data)
		var h transport.Header
		var want []byte
		var err error
		used := allocated(func() { want, err = transport.ReadFrame(lb, p, maxSize, &h) })
		if used > allocBudget(len(data)) {
			t.Fatalf("ReadFrame allocated %d bytes for %d input bytes", used, len(data))
		}
		if errors.Is(err, buf.ErrNotEnough) && lb.Len() != len(data) {
			t.Fatalf("ErrNotEnough after consuming %d bytes", len(data)-lb.Len())
		}
		if err == nil {
			checkFrame(t, p, data, len(data)-lb.Len(), want, &h, maxSize)
		}
		r := newBlockingReader(data, int(chunk)%64+1)
		got, err2 := transport.ReadFrame(r, p, maxSize, nil)
		if errors.Is(err, buf.ErrNotEnough) {
			if err2 == nil || (!errors.Is(err2, errPastEnd) && !errors.Is(err2, buf.ErrNotEnough)) {
				t.Fatalf("LinkBuffer: %v; blocking reader: %v", err, err2)
			}
			return
		}
		if (err == nil) != (err2 == nil) || !bytes.Equal(got, want) {
			t.Fatalf("LinkBuffer: %d bytes, %v; blocking reader: %d bytes, %v", len(want), err, len(got), err2)
		}
		if err != nil || p != transport.Buffered {
			return
		}
		// The frame is a whole message: a strict header, then a struct that
		// Skip measures to the frame's end.
		nl := int(uint32(want[4])<<24 | uint32(want[5])<<16 | uint32(want[6])<<8 | uint32(want[7]))
		n, serr := thrift.Binary.Skip(want[12+nl:], thrift.STRUCT, 0)
		if serr != nil || 12+nl+n != len(want) {
			t.Fatalf("frame of %d bytes, Skip says %d, %v", len(want), 12+nl+n, serr)
		}
	})
}

// checkFrame checks a frame ReadFrame accepted from data, of which it took
// used bytes: a Framed or TTHeader frame is as long as its length field
// says, and its payload is the frame's tail; a TTHeader frame decodes the
// same with DecodeTTHeader; a Buffered payload is all the bytes taken.
func checkFrame(t *testing.T, p transport.Protocol, data []byte, used int, payload []byte, h *transport.Header, maxSize int) {
	t.Helper()
	if p == transport.Buffered {
		if !bytes.Equal(payload, data[:used]) {
			t.Fatalf("Buffered: took %d bytes, returned %d other bytes", used, len(payload))
		}
		return
	}
	declared := int(uint32(data[0])<<24 | uint32(data[1])<<16 | uint32(data[2])<<8 | uint32(data[3]))
	if used != 4+declared || !bytes.HasSuffix(data[:used], payload) {
		t.Fatalf("%v: length field %d, took %d bytes, payload of %d is not their tail", p, declared, used, len(payload))
	}
	if p == transport.Framed {
		if len(payload) != declared {
			t.Fatalf("Framed: length field %d, payload %d", declared, len(payload))
		}
		return
	}
	var h2 transport.Header
	p2, n, err := transport.DecodeTTHeader(data, maxSize, &h2)
	if err != nil || n != used || !bytes.Equal(p2, payload) || h2.SeqID != h.SeqID || h2.Flags != h.Flags ||
		h2.PayloadProtocol != h.PayloadProtocol || h2.ACLToken != h.ACLToken ||
		!maps.Equal(h2.IntInfo, h.IntInfo) || !maps.Equal(h2.StrInfo, h.StrInfo) {
		t.Fatalf("ReadFrame took %d bytes, %+v; DecodeTTHeader %d bytes, %+v, %v", used, *h, n, h2, err)
	}
}
