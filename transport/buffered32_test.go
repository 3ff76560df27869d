package transport_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// TestBufferedHugeDeclaredSize32: with codec/thrift's MaxStringSize
// raised to the largest value Limits.Validate accepts (math.MaxInt32), a
// Buffered message declaring a method name or a string field of nearly 2 GiB
// must be refused (ErrFrameTooLarge: it cannot fit in maxSize). On a 32-bit
// platform (GOARCH=386, which make test runs for buf and netpoll) the
// walker's "12 + name length" and "pos + 4 + string length" overflow int,
// the size checks passed on the negative result, and ReadFrame panicked with a
// negative slice index: a few bytes from the network crash the reader.
// Run: GOARCH=386 go test -run TestBufferedHugeDeclaredSize32 ./transport/
func TestBufferedHugeDeclaredSize32(t *testing.T) {
	old := thrift.CurrentLimits()
	if err := thrift.SetLimits(thrift.Limits{MaxStringSize: math.MaxInt32}); err != nil {
		t.Fatal(err)
	}
	defer thrift.SetLimits(old)

	// A method name of 0x7ffffff8 bytes.
	name := []byte{0x80, 0x01, 0x00, 0x01, 0x7f, 0xff, 0xff, 0xf8, 'a', 'b', 'c', 'd', 0, 0, 0, 0}
	// A valid header, then a string field declaring 0x7ffffff0 bytes.
	field := binary.BigEndian.AppendUint32(nil, 0x80010001)
	field = binary.BigEndian.AppendUint32(field, 4)
	field = append(field, "Echo"...)
	field = binary.BigEndian.AppendUint32(field, 1)
	field = append(field, byte(thrift.STRING), 0, 1)
	field = binary.BigEndian.AppendUint32(field, 0x7ffffff0)
	field = append(field, "some bytes of it"...)

	for _, c := range []struct {
		what string
		msg  []byte
	}{{"name", name}, {"string field", field}} {
		for _, rd := range []buf.Reader{buf.NewLinkBufferFrom(c.msg), newBlockingReader(c.msg, 7)} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s of ~2 GiB, %T: ReadFrame panicked: %v", c.what, rd, r)
					}
				}()
				_, err := transport.ReadFrame(rd, transport.Buffered, 1<<20, nil)
				if err == nil {
					t.Errorf("%s of ~2 GiB, %T: no error", c.what, rd)
				}
			}()
		}
	}
}
