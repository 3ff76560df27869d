package transport_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// ttVector is a TTHeader frame computed by hand from docs/spec/ttheader.md:
// seq 1, flags 0, binary payload, StrInfo {"k": "v"}, IntInfo {9: "Echo"},
// ACL token "t", payload 01 02 03 04.
var ttVector = []byte{
	0x00, 0x00, 0x00, 0x2a, // LENGTH: 42 bytes follow
	0x10, 0x00, // HEADER MAGIC
	0x00, 0x00, // FLAGS
	0x00, 0x00, 0x00, 0x01, // SEQUENCE NUMBER
	0x00, 0x07, // HEADER SIZE: 7 words = 28 bytes
	0x00,                                               // PROTOCOL ID: binary
	0x00,                                               // NUM TRANSFORMS
	0x01, 0x00, 0x01, 0x00, 0x01, 'k', 0x00, 0x01, 'v', // INFO_KEYVALUE, 1 entry
	0x10, 0x00, 0x01, 0x00, 0x09, 0x00, 0x04, 'E', 'c', 'h', 'o', // INFO_INTKEYVALUE, 1 entry
	0x11, 0x00, 0x01, 't', // INFO_ACL_TOKEN
	0x00, 0x00, // padding to 28
	0x01, 0x02, 0x03, 0x04, // PAYLOAD
}

func vectorHeader() *transport.Header {
	h := &transport.Header{SeqID: 1, ACLToken: "t"}
	h.SetStr("k", "v")
	h.SetInt(transport.KeyToMethod, "Echo")
	return h
}

func TestTTHeaderVectorEncode(t *testing.T) {
	lb := buf.NewLinkBuffer()
	defer lb.Reset()
	room, err := transport.BeginFrame(lb, transport.TTHeader, vectorHeader(), 4)
	if err != nil {
		t.Fatal(err)
	}
	copy(room, []byte{1, 2, 3, 4})
	lb.Flush()
	if got := lb.Bytes(); !bytes.Equal(got, ttVector) {
		t.Fatalf("encoded\n% x\nwant\n% x", got, ttVector)
	}
}

func TestTTHeaderVectorDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		read func(h *transport.Header) ([]byte, error)
	}{
		{"ReadFrame", func(h *transport.Header) ([]byte, error) {
			return transport.ReadFrame(buf.NewLinkBufferFrom(ttVector), transport.TTHeader, 0, h)
		}},
		{"DecodeTTHeader", func(h *transport.Header) ([]byte, error) {
			p, n, err := transport.DecodeTTHeader(ttVector, 0, h)
			if err == nil && n != len(ttVector) {
				t.Fatalf("n = %d", n)
			}
			return p, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h transport.Header
			h.SetStr("stale", "x") // ReadFrame resets
			p, err := tc.read(&h)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p, []byte{1, 2, 3, 4}) {
				t.Fatalf("payload % x", p)
			}
			want := vectorHeader()
			if h.SeqID != 1 || h.Flags != 0 || h.ACLToken != "t" || h.Protocol != transport.TTHeader ||
				!maps.Equal(h.IntInfo, want.IntInfo) || !maps.Equal(h.StrInfo, want.StrInfo) {
				t.Fatalf("decoded %+v", h)
			}
		})
	}
}

func TestTTHeaderRoundTripAllFields(t *testing.T) {
	out := &transport.Header{
		Flags:    transport.FlagSupportOutOfOrder | transport.FlagSASL,
		ACLToken: "secret-token",
	}
	out.SetInt(transport.KeyFromService, "caller")
	out.SetInt(transport.KeyToService, "callee")
	out.SetInt(transport.KeyToMethod, "Echo")
	out.SetInt(transport.KeyRPCTimeout, "1500")
	out.SetInt(transport.KeyLogID, "")
	out.SetStr(transport.StrKeyBizStatus, "1001")
	out.SetStr(transport.StrKeyConnReset, "1")
	out.SetStr("rpc-transit-x", string(bytes.Repeat([]byte("y"), 1000)))
	for _, payload := range []uint8{transport.PayloadBinary, transport.PayloadCompact} {
		out.PayloadProtocol = payload
		var in transport.Header
		roundTrip(t, transport.TTHeader, out, &in)
		if in.Flags != out.Flags || in.ACLToken != out.ACLToken || in.PayloadProtocol != payload ||
			!maps.Equal(in.IntInfo, out.IntInfo) || !maps.Equal(in.StrInfo, out.StrInfo) {
			t.Fatalf("decoded %+v\nwant %+v", in, out)
		}
	}
}

// TestTTHeaderPadding checks that padding (info id 0) is skipped wherever it
// is, and that an empty header (protocol id and transform count, 2 padding
// bytes) is accepted.
func TestTTHeaderPadding(t *testing.T) {
	frame := []byte{
		0, 0, 0, 24, 0x10, 0, 0, 0, 0, 0, 0, 5, 0, 3,
		0, 0, // protocol, transforms
		0, 0, // padding
		0x11, 0, 2, 'a', 'b', // ACL token between paddings
		0, 0, 0, // padding
		9, 9, // payload
	}
	var h transport.Header
	p, n, err := transport.DecodeTTHeader(frame, 0, &h)
	if err != nil || n != len(frame) || !bytes.Equal(p, []byte{9, 9}) || h.ACLToken != "ab" || h.SeqID != 5 {
		t.Fatalf("= % x, %d, %v; header %+v", p, n, err, h)
	}
}

func TestTTHeaderBad(t *testing.T) {
	// frame builds a frame around a variable header hb (padded by the
	// caller to a multiple of 4) and a 1-byte payload.
	frame := func(hb ...byte) []byte {
		b := []byte{0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, byte(len(hb) / 4)}
		b = append(b, hb...)
		b = append(b, 0xaa)
		b[3] = byte(len(b) - 4)
		return b
	}
	for _, tc := range []struct {
		name  string
		frame []byte
		kind  error
	}{
		{"bad magic", []byte{0, 0, 0, 12, 0x10, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0}, transport.ErrBadFrame},
		{"header size 0", []byte{0, 0, 0, 12, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, transport.ErrBadFrame},
		{"header past frame", []byte{0, 0, 0, 12, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0}, transport.ErrBadFrame},
		{"header over 64 KiB", []byte{0, 2, 0, 12, 0x10, 0, 0, 0, 0, 0, 0, 1, 0x40, 1, 0, 0, 0, 0}, transport.ErrBadFrame},
		{"unknown info id", frame(0, 0, 0x05, 0), transport.ErrBadFrame},
		{"transform", frame(0, 1, 1, 0), transport.ErrUnsupported},
		{"transforms past header", frame(0, 9, 1, 0), transport.ErrBadFrame},
		{"kv count past header", frame(0, 0, 0x01, 0xff, 0xff, 0, 0, 0), transport.ErrBadFrame},
		{"int count past header", frame(0, 0, 0x10, 0x00, 0x02, 0, 0, 0), transport.ErrBadFrame},
		{"string past header", frame(0, 0, 0x01, 0x00, 0x01, 0x00, 0x09, 0), transport.ErrBadFrame},
		{"int value past header", frame(0, 0, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x20, 0, 0, 0), transport.ErrBadFrame},
		{"acl past header", frame(0, 0, 0x11, 0x01, 0x00, 0, 0, 0), transport.ErrBadFrame},
		{"count cut", frame(0, 0, 0, 0x01), transport.ErrBadFrame},
		{"2 GiB frame", []byte{0x7f, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1}, transport.ErrFrameTooLarge},
		{"negative length", []byte{0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1}, transport.ErrBadFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h transport.Header
			_, err := transport.ReadFrame(buf.NewLinkBufferFrom(tc.frame), transport.TTHeader, 1<<20, &h)
			if !errors.Is(err, tc.kind) || rpcerr.CodeOf(err) != rpcerr.Protocol {
				t.Fatalf("ReadFrame err = %v, want %v", err, tc.kind)
			}
			_, _, err = transport.DecodeTTHeader(tc.frame, 1<<20, &h)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("DecodeTTHeader err = %v, want %v", err, tc.kind)
			}
		})
	}
}

func TestTTHeaderEncodeLimits(t *testing.T) {
	lb := buf.NewLinkBuffer()
	defer lb.Reset()
	long := string(make([]byte, 1<<16))
	for _, h := range []*transport.Header{
		{ACLToken: long},
		{StrInfo: map[string]string{long: ""}},
		{IntInfo: map[uint16]string{1: long}},
		{StrInfo: map[string]string{"a": long[:40000], "b": long[:40000]}},
	} {
		if _, err := transport.BeginFrame(lb, transport.TTHeader, h, 1); !errors.Is(err, transport.ErrHeaderTooLarge) {
			t.Fatalf("err = %v", err)
		}
	}
	if lb.MallocLen() != 0 {
		t.Fatalf("a refused header left %d bytes", lb.MallocLen())
	}
}

// TestHugeFrameNoAlloc feeds 10-byte frames that declare 2 GiB and checks
// that rejecting them allocates almost nothing (only the error).
func TestHugeFrameNoAlloc(t *testing.T) {
	for _, tc := range []struct {
		p     transport.Protocol
		frame []byte
	}{
		{transport.Framed, []byte{0x7f, 0xff, 0xff, 0xfa, 0x80, 0x01, 0, 1, 0, 0}},
		{transport.TTHeader, []byte{0x7f, 0xff, 0xff, 0xfa, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1}},
		{transport.Buffered, []byte{0x80, 0x01, 0, 1, 0x7f, 0xff, 0xff, 0xf0, 'a', 'b'}},
	} {
		t.Run(tc.p.String(), func(t *testing.T) {
			lb := buf.NewLinkBufferFrom(tc.frame)
			read := func() {
				_, err := transport.ReadFrame(lb, tc.p, 0, nil)
				if !errors.Is(err, transport.ErrFrameTooLarge) {
					t.Fatalf("err = %v", err)
				}
			}
			read()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const runs = 100
			for range runs {
				read()
			}
			runtime.ReadMemStats(&after)
			if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 1024 {
				t.Fatalf("%d bytes allocated per rejected frame", per)
			}
			if allocs := testing.AllocsPerRun(runs, read); allocs > 6 {
				t.Fatalf("%.0f allocations per rejected frame", allocs)
			}
		})
	}
}

// TestHeaderReuseAllocs checks the string reuse of a Header across frames:
// the same values decode with no allocation, a changed value with one.
func TestHeaderReuseAllocs(t *testing.T) {
	build := func(logID string) []byte {
		lb := buf.NewLinkBuffer()
		h := vectorHeader()
		h.SetInt(transport.KeyLogID, logID)
		h.SetStr("rpc-transit-k2", "v2")
		room, err := transport.BeginFrame(lb, transport.TTHeader, h, 1)
		if err != nil {
			t.Fatal(err)
		}
		room[0] = 0
		lb.Flush()
		return lb.Bytes()
	}
	same, other := build("log-1"), build("log-2")
	var h transport.Header
	decode := func(f []byte) {
		if _, _, err := transport.DecodeTTHeader(f, 0, &h); err != nil {
			t.Fatal(err)
		}
	}
	decode(same)
	if a := testing.AllocsPerRun(100, func() { decode(same) }); a != 0 {
		t.Fatalf("same header: %.1f allocations, want 0", a)
	}
	i := 0
	if a := testing.AllocsPerRun(100, func() {
		i++
		if i%2 == 0 {
			decode(same)
		} else {
			decode(other)
		}
	}); a > 1 {
		t.Fatalf("changed value: %.1f allocations, want at most 1", a)
	}
	decode(other)
	if h.IntInfo[transport.KeyLogID] != "log-2" || h.StrInfo["rpc-transit-k2"] != "v2" {
		t.Fatalf("decoded %+v", h)
	}
	// Strings outlive the frame's memory.
	f := build("log-3")
	decode(f)
	s := h.IntInfo[transport.KeyLogID]
	clear(f)
	if s != "log-3" {
		t.Fatalf("string changed with the frame: %q", s)
	}
}

func TestWriteMessageTTHeaderSeq(t *testing.T) {
	lb := buf.NewLinkBuffer()
	defer lb.Reset()
	h := &transport.Header{SeqID: 5}
	if err := transport.WriteMessage(lb, transport.TTHeader, h, "M", thrift.REPLY, 9, &echo{}); err != nil {
		t.Fatal(err)
	}
	lb.Flush()
	var in transport.Header
	_, typ, seq, _, err := transport.ReadMessage(lb, transport.TTHeader, 0, &in)
	if err != nil || typ != thrift.REPLY || seq != 9 || in.SeqID != 9 {
		t.Fatalf("typ %v seq %d frame seq %d err %v", typ, seq, in.SeqID, err)
	}
}

// TestWriteMessageUnknownPayloadProtocol: WriteMessage encodes binary or
// compact only, so a Header asking for another payload protocol is refused
// instead of labelling a binary message with that protocol id.
func TestWriteMessageUnknownPayloadProtocol(t *testing.T) {
	for _, p := range []transport.Protocol{transport.TTHeader, transport.Framed} {
		lb := buf.NewLinkBuffer()
		h := &transport.Header{PayloadProtocol: 4}
		err := transport.WriteMessage(lb, p, h, "M", thrift.CALL, 1, &echo{})
		if !errors.Is(err, transport.ErrUnsupported) {
			t.Errorf("%v: WriteMessage with payload protocol 4: err %v, want ErrUnsupported", p, err)
		}
		if lb.MallocLen() != 0 {
			t.Errorf("%v: %d bytes left in the writer", p, lb.MallocLen())
		}
		lb.Reset()
	}
}

// TestHeaderRememberBounded checks that a Header remembers a bounded number
// of strings, and none from large headers.
func TestHeaderRememberBounded(t *testing.T) {
	var h transport.Header
	for i := range 200 {
		src := &transport.Header{}
		src.SetInt(uint16(i), "v")
		src.SetStr(strconv.Itoa(i), "v")
		lb := buf.NewLinkBuffer()
		room, err := transport.BeginFrame(lb, transport.TTHeader, src, 1)
		if err != nil {
			t.Fatal(err)
		}
		room[0] = 0
		lb.Flush()
		if _, _, err := transport.DecodeTTHeader(lb.Bytes(), 0, &h); err != nil {
			t.Fatal(err)
		}
		ints, strs := transport.SeenLen(&h)
		if ints > transport.MaxSeen || strs > transport.MaxSeen {
			t.Fatalf("remembers %d and %d strings", ints, strs)
		}
	}
	var big transport.Header
	src := &transport.Header{}
	src.SetStr("big", string(make([]byte, transport.RememberMax)))
	lb := buf.NewLinkBuffer()
	room, _ := transport.BeginFrame(lb, transport.TTHeader, src, 1)
	room[0] = 0
	lb.Flush()
	if _, _, err := transport.DecodeTTHeader(lb.Bytes(), 0, &big); err != nil || len(big.StrInfo["big"]) != transport.RememberMax {
		t.Fatal(err)
	}
	if _, strs := transport.SeenLen(&big); strs != 0 {
		t.Fatalf("remembered %d strings of a %d-byte header", strs, transport.RememberMax)
	}
}

// TestTTHeaderShortFrameNoWait sends TTHeader frames whose LENGTH is too
// short for the fixed header, with nothing after them: ReadFrame must refuse
// them from their length, not wait (on a connection, until the read timeout)
// for header bytes the frame cannot contain.
func TestTTHeaderShortFrameNoWait(t *testing.T) {
	for _, frame := range [][]byte{
		{0, 0, 0, 0},
		{0, 0, 0, 2, 0x10, 0},
		{0, 0, 0, 9, 0x10, 0, 0, 0, 0, 0, 0, 1, 0},
	} {
		r := newBlockingReader(frame, len(frame))
		_, err := transport.ReadFrame(r, transport.TTHeader, 1<<20, nil)
		if !errors.Is(err, transport.ErrBadFrame) || rpcerr.CodeOf(err) != rpcerr.Protocol {
			t.Fatalf("frame % x: err = %v, want ErrBadFrame", frame, err)
		}
		lb := buf.NewLinkBufferFrom(frame)
		if _, err := transport.ReadFrame(lb, transport.TTHeader, 1<<20, nil); !errors.Is(err, transport.ErrBadFrame) {
			t.Fatalf("frame % x from a LinkBuffer: err = %v, want ErrBadFrame", frame, err)
		}
	}
}

// TestTTHeaderFramedPayload reads a frame as a Kitex client configured with
// transport.TTHeaderFramed writes it: the TTHeader payload is itself a
// framed message (a 4-byte length, then the strict binary message). Kitex
// servers accept it; ReadMessage must too, and ReadFrame returns the message
// without that length.
func TestTTHeaderFramedPayload(t *testing.T) {
	body := &echo{Text: "hi", Nums: []int32{1, 2}}
	msgLen := thrift.Binary.MessageBeginLength("Echo") + body.BLength()
	frame := func(innerLen int) *buf.LinkBuffer {
		lb := buf.NewLinkBuffer()
		room, err := transport.BeginFrame(lb, transport.TTHeader, &transport.Header{SeqID: 3}, 4+msgLen)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint32(room, uint32(innerLen))
		n := thrift.Binary.WriteMessageBegin(room[4:], "Echo", thrift.CALL, 3)
		body.FastWrite(room[4+n:])
		lb.Flush()
		return lb
	}
	lb := frame(msgLen)
	var h transport.Header
	name, typ, seq, b, err := transport.ReadMessage(lb, transport.TTHeader, 0, &h)
	if err != nil || name != "Echo" || typ != thrift.CALL || seq != 3 {
		t.Fatalf("ReadMessage: %q %v %d %v", name, typ, seq, err)
	}
	got := &echo{}
	if _, err := got.FastRead(b); err != nil || got.Text != "hi" || len(got.Nums) != 2 {
		t.Fatalf("body: %+v %v", got, err)
	}
	lb.Reset()

	// An inner length that disagrees with the payload is a bad frame.
	lb = frame(msgLen + 1)
	defer lb.Reset()
	if _, err := transport.ReadFrame(lb, transport.TTHeader, 0, &h); !errors.Is(err, transport.ErrBadFrame) {
		t.Fatalf("inner length off by one: err = %v, want ErrBadFrame", err)
	}
}

// TestHeaderResetDropsLargeMaps: a Header reused per connection does not
// keep the map memory of one large header (a peer's 3,000 keys) for the
// rest of the connection's life: after a small frame it holds about what a
// Header that never saw the large one holds.
func TestHeaderResetDropsLargeMaps(t *testing.T) {
	var big transport.Header
	for i := range transport.MaxInfoEntries / 2 {
		big.SetStr("k"+strconv.Itoa(10000+i), "v")
		big.SetInt(uint16(100+i), "w")
	}
	lb := buf.NewLinkBuffer()
	defer lb.Reset()
	if _, err := transport.BeginFrame(lb, transport.TTHeader, &big, 0); err != nil {
		t.Fatal(err)
	}
	lb.Flush()
	bigFrame := bytes.Clone(lb.Bytes())
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	const n = 50
	hs := make([]transport.Header, n)
	before := heap()
	for i := range hs {
		if _, _, err := transport.DecodeTTHeader(bigFrame, 0, &hs[i]); err != nil || len(hs[i].StrInfo) != transport.MaxInfoEntries/2 || len(hs[i].IntInfo) != transport.MaxInfoEntries/2 {
			t.Fatalf("large frame: %v, %d and %d keys", err, len(hs[i].StrInfo), len(hs[i].IntInfo))
		}
		if _, _, err := transport.DecodeTTHeader(ttVector, 0, &hs[i]); err != nil || len(hs[i].StrInfo) != 1 {
			t.Fatalf("small frame: %v, %d keys", err, len(hs[i].StrInfo))
		}
	}
	after := heap()
	if per := (int64(after) - int64(before)) / n; per > 16<<10 {
		t.Fatalf("a Header holds %d bytes after a 1,024-key frame and a 1-key frame, want <= 16 KiB", per)
	}
	runtime.KeepAlive(hs)
}

// TestInfoEntriesBounded: a header of more than MaxInfoEntries key/value
// entries is refused, by the encoder and by the decoder. Each entry becomes
// a map entry that a request holds while it is served: 16,000 integer keys
// with empty values (64 KiB on the wire) took some 860 KiB, 14 times their
// frame, for every request in flight.
func TestInfoEntriesBounded(t *testing.T) {
	var h transport.Header
	for i := range transport.MaxInfoEntries + 1 {
		h.SetInt(uint16(100+i), "")
	}
	if _, err := transport.BeginFrame(buf.NewLinkBuffer(), transport.TTHeader, &h, 0); !errors.Is(err, transport.ErrHeaderTooLarge) {
		t.Fatalf("encoding %d entries: %v, want ErrHeaderTooLarge", transport.MaxInfoEntries+1, err)
	}
	// The decoder: INFO_INTKEYVALUE with MaxInfoEntries+1 empty values.
	n := transport.MaxInfoEntries + 1
	hdr := []byte{0x00, 0x00, 0x10, byte(n >> 8), byte(n)}
	for i := range n {
		hdr = append(hdr, byte((100+i)>>8), byte(100+i), 0, 0)
	}
	for len(hdr)%4 != 0 {
		hdr = append(hdr, 0)
	}
	frame := binary.BigEndian.AppendUint32(nil, uint32(10+len(hdr)+1))
	frame = append(frame, 0x10, 0x00, 0x00, 0x00, 0, 0, 0, 1)
	frame = binary.BigEndian.AppendUint16(frame, uint16(len(hdr)/4))
	frame = append(frame, hdr...)
	frame = append(frame, 0x00) // one payload byte
	var got transport.Header
	_, _, err := transport.DecodeTTHeader(frame, 0, &got)
	if err == nil || !strings.Contains(err.Error(), "key/value entries") {
		t.Fatalf("decoding %d entries: %v (%d kept), want an error naming the limit", n, err, len(got.IntInfo))
	}
	// One fewer is fine.
	h = transport.Header{}
	for i := range transport.MaxInfoEntries {
		h.SetInt(uint16(100+i), "")
	}
	if _, err := transport.BeginFrame(buf.NewLinkBuffer(), transport.TTHeader, &h, 0); err != nil {
		t.Fatalf("encoding %d entries: %v", transport.MaxInfoEntries, err)
	}
}
