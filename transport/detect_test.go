package transport_test

import (
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/transport"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want transport.Protocol
		err  error
	}{
		{[]byte{0x80, 0x01, 0x00, 0x01, 0, 0}, transport.Buffered, nil},
		{[]byte{0x80, 0x01}, transport.Buffered, nil},
		{[]byte{0x80}, 0, transport.ErrNeedMore},
		{[]byte{}, 0, transport.ErrNeedMore},
		{[]byte{0, 0, 0, 20, 0x10, 0x00}, transport.TTHeader, nil},
		{[]byte{0, 0, 0, 20, 0x10, 0x00, 0x00, 0x01}, transport.TTHeader, nil},
		{[]byte{0, 0, 0, 20, 0x80, 0x01, 0, 1}, transport.Framed, nil},
		{[]byte{0, 0, 0, 20, 0x82, 0x21}, transport.Framed, nil},
		{[]byte{0, 0, 0, 20, 0x10}, 0, transport.ErrNeedMore},
		{[]byte{0, 0, 0}, 0, transport.ErrNeedMore},
		{[]byte{0, 0, 0, 20, 0x0f, 0xff}, 0, transport.ErrUnsupported},
		{[]byte{0x82, 0x21, 0, 0, 0, 0}, 0, transport.ErrUnsupported},
		{[]byte{0x80, 0x02}, 0, transport.ErrUnknownProtocol},
		{[]byte{0xff}, 0, transport.ErrUnknownProtocol},
		{[]byte("GET / HTTP/1.1\r\n"), 0, transport.ErrUnknownProtocol},
		{[]byte("PRI * HTTP/2.0"), 0, transport.ErrUnknownProtocol},
		{[]byte{0, 0, 0, 20, 0x10, 0x01}, 0, transport.ErrUnknownProtocol},
	} {
		got, err := transport.Detect(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("Detect(% x) = %v, %v; want %v, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestDetectPartial feeds each protocol's first bytes one at a time: Detect
// says ErrNeedMore until it can decide, then the right protocol, and never
// needs more than DetectLen bytes.
func TestDetectPartial(t *testing.T) {
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered, transport.TTHeader} {
		lb := buf.NewLinkBuffer()
		if err := transport.WriteMessage(lb, p, nil, "Echo", 1, 1, &echo{Text: "x"}); err != nil {
			t.Fatal(err)
		}
		lb.Flush()
		b := lb.Bytes()
		decided := false
		for i := 0; i <= transport.DetectLen; i++ {
			got, err := transport.Detect(b[:i])
			if errors.Is(err, transport.ErrNeedMore) {
				if decided {
					t.Fatalf("%v: undecided at %d bytes after deciding", p, i)
				}
				continue
			}
			if err != nil || got != p {
				t.Fatalf("%v: Detect of %d bytes = %v, %v", p, i, got, err)
			}
			decided = true
		}
		if !decided {
			t.Fatalf("%v: not decided with %d bytes", p, transport.DetectLen)
		}
		// DetectReader on a blocking reader delivering one byte at a time.
		r := newBlockingReader(b, 1)
		if got, err := transport.DetectReader(r); err != nil || got != p || r.Len() > transport.DetectLen {
			t.Fatalf("%v: DetectReader = %v, %v", p, got, err)
		}
		lb.Reset()
	}
}

func TestProtocolString(t *testing.T) {
	for p, s := range map[transport.Protocol]string{
		transport.Framed: "framed", transport.Buffered: "buffered", transport.TTHeader: "ttheader", 9: "Protocol(9)",
	} {
		if p.String() != s {
			t.Errorf("%d: %q", p, p.String())
		}
	}
}
