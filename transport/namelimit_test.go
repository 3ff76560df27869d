package transport_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// TestNameOverMaxStringSize: a method name longer than
// Limits.MaxStringSize is refused on every transport and payload, as
// docs/spec/thrift-binary.md says and the codec does; the binary payload
// of Framed, TTHeader and Buffered let it through.
func TestNameOverMaxStringSize(t *testing.T) {
	old := thrift.CurrentLimits()
	if err := thrift.SetLimits(thrift.Limits{MaxStringSize: 16}); err != nil {
		t.Fatal(err)
	}
	defer thrift.SetLimits(old)
	for _, tc := range []struct {
		p  transport.Protocol
		pp uint8
	}{
		{transport.Framed, transport.PayloadBinary},
		{transport.TTHeader, transport.PayloadBinary},
		{transport.Buffered, transport.PayloadBinary},
		{transport.Framed, transport.PayloadCompact},
		{transport.TTHeader, transport.PayloadCompact},
	} {
		for _, n := range []int{16, 17} {
			lb := buf.NewLinkBuffer()
			h := &transport.Header{PayloadProtocol: tc.pp}
			name := strings.Repeat("n", n)
			if err := transport.WriteMessage(lb, tc.p, h, name, thrift.CALL, 1, &echo{Text: "x"}); err != nil {
				t.Fatal(err)
			}
			lb.Flush()
			got, _, _, _, err := transport.ReadMessage(lb, tc.p, 0, nil)
			switch {
			case n <= 16 && (err != nil || got != name):
				t.Errorf("%v payload %d: a name of %d bytes read as %q, %v", tc.p, tc.pp, n, got, err)
			case n > 16 && err == nil:
				t.Errorf("%v payload %d: a name of %d bytes, over the limit of 16, read without error", tc.p, tc.pp, n)
			case n > 16 && !errors.Is(err, transport.ErrBadMessage) && thrift.KindOf(err) == 0:
				t.Errorf("%v payload %d: error %v, want a bad message", tc.p, tc.pp, err)
			}
		}
	}
}
