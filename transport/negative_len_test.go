package transport_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// A Framed or TTHeader LENGTH with its top bit set is negative as the i32 the
// specifications define: no writer produces it, so it is refused as a
// malformed frame before anything waits for its bytes, whatever the size
// limit (which may be configured above 2 GiB).
func TestNegativeFrameLength(t *testing.T) {
	cases := []struct {
		p     transport.Protocol
		frame []byte
	}{
		{transport.Framed, []byte{0xff, 0xff, 0xff, 0xf0, 0x80, 0x01, 0x00, 0x01, 0, 0, 0, 0}},
		{transport.Framed, []byte{0x80, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0x01, 0, 0, 0, 0}},
		{transport.TTHeader, []byte{0xff, 0xff, 0xff, 0xf0, 0x10, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0}},
		// Fewer bytes than the fixed header: refused without waiting for more.
		{transport.TTHeader, []byte{0x80, 0, 0, 0, 0x10, 0x00, 0, 0}},
	}
	for _, c := range cases {
		for _, limit := range []int{1 << 20, math.MaxInt} {
			lb := buf.NewLinkBufferFrom(c.frame)
			r := newBlockingReader(c.frame, len(c.frame))
			for _, rd := range []buf.Reader{lb, r} {
				_, err := transport.ReadFrame(rd, c.p, limit, nil)
				if !errors.Is(err, transport.ErrBadFrame) || rpcerr.CodeOf(err) != rpcerr.Protocol ||
					!strings.Contains(err.Error(), "negative") {
					t.Errorf("%v length % x, limit %d: err = %v; want ErrBadFrame naming the negative length", c.p, c.frame[:4], limit, err)
				}
			}
			if lb.Len() != len(c.frame) {
				t.Errorf("%v: a rejected frame consumed %d bytes", c.p, len(c.frame)-lb.Len())
			}
		}
		_, _, err := transport.DecodeTTHeader(c.frame, math.MaxInt, nil)
		if c.p == transport.TTHeader && !errors.Is(err, transport.ErrBadFrame) {
			t.Errorf("DecodeTTHeader: err = %v; want ErrBadFrame", err)
		}
	}
}
