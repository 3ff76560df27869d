package transport_test

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// TestBufferedSplitReads frames a message with nested containers arriving in
// chunks of every size, from a reader that blocks like a connection: the
// frame must be exactly the message, and the reader must never be asked for
// a byte past it.
func TestBufferedSplitReads(t *testing.T) {
	for _, listLen := range []int{0, 3, 200} {
		msg := nestedMessage(listLen)
		if n, err := thrift.Binary.Skip(msg[18:], thrift.STRUCT, 0); err != nil || 18+n != len(msg) {
			t.Fatalf("test message is not well formed: %d, %v", n, err)
		}
		for _, chunk := range []int{1, 2, 3, 5, 7, 13, 64, 1000, len(msg)} {
			r := newBlockingReader(msg, chunk)
			var h transport.Header
			got, err := transport.ReadFrame(r, transport.Buffered, 0, &h)
			if err != nil {
				t.Fatalf("list %d, chunks of %d: %v", listLen, chunk, err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("list %d, chunks of %d: frame of %d bytes, want %d", listLen, chunk, len(got), len(msg))
			}
			if r.Len() != 0 || len(r.chunks) != 0 {
				t.Fatalf("bytes left")
			}
			r.Release()
			r.lb.Reset()
		}
	}
}

// TestBufferedPipelined reads back-to-back messages from one stream.
func TestBufferedPipelined(t *testing.T) {
	var stream []byte
	var msgs [][]byte
	for i := range 5 {
		m := nestedMessage(i * 10)
		msgs = append(msgs, m)
		stream = append(stream, m...)
	}
	for _, chunk := range []int{1, 17, 4096, len(stream)} {
		r := newBlockingReader(stream, chunk)
		for i, want := range msgs {
			name, typ, seq, body, err := transport.ReadMessage(r, transport.Buffered, 0, nil)
			if err != nil || name != "Nested" || typ != thrift.CALL || seq != 42 || len(body) != len(want)-18 {
				t.Fatalf("chunks %d, message %d: %q %v %d %d bytes, %v", chunk, i, name, typ, seq, len(body), err)
			}
		}
		if _, err := transport.ReadFrame(r, transport.Buffered, 0, nil); !errors.Is(err, errPastEnd) {
			t.Fatalf("after the last message: %v", err)
		}
		r.lb.Reset()
	}
}

// TestBufferedLinkBufferPartial feeds a LinkBuffer byte by byte: ReadFrame
// reports buf.ErrNotEnough and consumes nothing until the message is whole.
func TestBufferedLinkBufferPartial(t *testing.T) {
	msg := nestedMessage(3)
	lb := buf.NewLinkBuffer()
	defer lb.Reset()
	for i := range msg {
		lb.Write(msg[i : i+1])
		got, err := transport.ReadFrame(lb, transport.Buffered, 0, nil)
		if i < len(msg)-1 {
			if !errors.Is(err, buf.ErrNotEnough) || lb.Len() != i+1 {
				t.Fatalf("after %d bytes: %v, %d buffered", i+1, err, lb.Len())
			}
			continue
		}
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("whole message: %v", err)
		}
	}
}

// trickleMessage returns a strict binary CALL message of about elems*1 KiB:
// one list<string> field of elems strings of 1000 bytes.
func trickleMessage(elems int) []byte {
	B := thrift.Binary
	b := make([]byte, 64+elems*1004+16)
	n := B.WriteMessageBegin(b, "m", thrift.CALL, 1)
	n += B.WriteFieldBegin(b[n:], thrift.LIST, 1)
	n += B.WriteListBegin(b[n:], thrift.STRING, elems)
	s := string(make([]byte, 1000))
	for range elems {
		n += B.WriteString(b[n:], s)
	}
	n += B.WriteFieldStop(b[n:])
	return b[:n]
}

// TestBufferedTrickleIsLinear reads a 256 KiB message that arrives 1 KiB at
// a time, as from a slow client. The walker peeks the whole message so far
// after each arrival; the bytes span the buffer's nodes, so each Peek is a
// copy held until Release. Those copies must grow with the message, not
// with its square: copying the whole prefix on each Peek allocated 84 MiB
// here (342 times the message).
func TestBufferedTrickleIsLinear(t *testing.T) {
	msg := trickleMessage(256)
	r := newBlockingReader(msg, 1024)
	defer r.lb.Reset()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	got, err := transport.ReadFrame(r, transport.Buffered, 0, nil)
	runtime.ReadMemStats(&ms)
	grown := ms.TotalAlloc - before
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("ReadFrame: %d bytes, %v", len(got), err)
	}
	t.Logf("%d-byte message in %d waits: %d bytes allocated (%.1fx)", len(msg), r.waits, grown, float64(grown)/float64(len(msg)))
	if grown > 8*uint64(len(msg)) {
		t.Fatalf("reading a %d-byte message that arrived in 1 KiB pieces allocated %d bytes: more than 8 times its size", len(msg), grown)
	}
	r.Release()
}

func TestBufferedLimits(t *testing.T) {
	B := thrift.Binary
	head := func(extra ...byte) []byte {
		b := make([]byte, 64)
		n := B.WriteMessageBegin(b, "m", thrift.CALL, 1)
		return append(b[:n], extra...)
	}
	for _, tc := range []struct {
		name string
		msg  []byte
		max  int
		kind error
	}{
		{"huge name", []byte{0x80, 1, 0, 1, 0x7f, 0, 0, 0}, 0, transport.ErrFrameTooLarge},
		{"negative name", []byte{0x80, 1, 0, 1, 0xff, 0, 0, 0}, 0, transport.ErrBadMessage},
		{"bad type", []byte{0x80, 1, 0, 9, 0, 0, 0, 0}, 0, transport.ErrBadMessage},
		{"huge string", head(byte(thrift.STRING), 0, 1, 0x00, 0xff, 0xff, 0xff), 1 << 20, transport.ErrFrameTooLarge},
		{"string over limit", head(byte(thrift.STRING), 0, 1, 0x7f, 0xff, 0xff, 0xff), 0, transport.ErrBadMessage},
		{"negative string", head(byte(thrift.STRING), 0, 1, 0xff, 0xff, 0xff, 0xff), 0, transport.ErrBadMessage},
		{"huge list", head(byte(thrift.LIST), 0, 1, byte(thrift.I64), 0, 0x10, 0, 0), 1 << 20, transport.ErrFrameTooLarge},
		{"huge map", head(byte(thrift.MAP), 0, 1, byte(thrift.I64), byte(thrift.I64), 0, 0x10, 0, 0), 1 << 20, transport.ErrFrameTooLarge},
		{"list of unknown type", head(byte(thrift.LIST), 0, 1, 0x77, 0, 0, 0, 1), 0, transport.ErrBadMessage},
		{"unknown field type", head(0x77, 0, 1), 0, transport.ErrBadMessage},
		{"past limit", head(byte(thrift.I64), 0, 1, 1, 2, 3), 20, transport.ErrFrameTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A blocking reader holding only these bytes: the error must come
			// before any wait for more.
			r := newBlockingReader(tc.msg, len(tc.msg))
			_, err := transport.ReadFrame(r, transport.Buffered, tc.max, nil)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
		})
	}
}

// TestBufferedDepth checks that nesting beyond the codec's depth limit is
// refused while walking a partial message too.
func TestBufferedDepth(t *testing.T) {
	B := thrift.Binary
	b := make([]byte, 64)
	n := B.WriteMessageBegin(b, "m", thrift.CALL, 1)
	msg := b[:n]
	for range thrift.CurrentLimits().MaxDepth + 1 {
		msg = append(msg, byte(thrift.STRUCT), 0, 1)
	}
	// The message never ends: the walker must stop at the depth limit
	// rather than ask for more bytes.
	r := newBlockingReader(msg, 3)
	_, err := transport.ReadFrame(r, transport.Buffered, 0, nil)
	if !errors.Is(err, transport.ErrBadMessage) {
		t.Fatalf("err = %v", err)
	}
}

// peekCounter is a buf.Reader that fails its 100th Peek, so a reader that
// peeks the same bytes again and again ends with errTooManyPeeks instead of
// spinning for ever.
type peekCounter struct {
	buf.Reader
	peeks int
}

var errTooManyPeeks = errors.New("test: 100 peeks for one frame (ReadFrame spins)")

func (r *peekCounter) Peek(n int) ([]byte, error) {
	if r.peeks++; r.peeks >= 100 {
		return nil, errTooManyPeeks
	}
	return r.Reader.Peek(n)
}

// TestBufferedTinyMaxSize reads a Buffered message with a maxSize below the
// 8 bytes the walker reads first (WithMaxMessageSize accepts any positive
// value): ReadFrame must refuse the message as too large, not peek the same
// maxSize bytes for ever.
func TestBufferedTinyMaxSize(t *testing.T) {
	msg := nestedMessage(1)
	for _, max := range []int{1, 4, 7, 8, 12} {
		r := &peekCounter{Reader: buf.NewLinkBufferFrom(msg)}
		_, err := transport.ReadFrame(r, transport.Buffered, max, nil)
		if !errors.Is(err, transport.ErrFrameTooLarge) {
			t.Fatalf("maxSize %d: err = %v, want ErrFrameTooLarge", max, err)
		}
	}
}
