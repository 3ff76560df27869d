package thrift_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// A bad compact varint (cut off, or too long for its type) is reported with
// the name of the value it was to encode, as the binary protocol's errors
// name theirs: "varint cut off after 0 bytes" alone does not say whether a
// map size, a field id or an i32 was broken.
func TestCompactVarintErrorsNameTheValue(t *testing.T) {
	cut := []byte{0xff}                                  // a continuation byte and nothing after it
	over32 := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01} // six bytes: too long for 32 bits
	over64 := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	cases := []struct {
		name, want string
		read       func() error
	}{
		{"ReadI16 cut", "i16 varint cut off", func() error { _, _, err := cp.ReadI16(cut); return err }},
		{"ReadI16 overflow", "i16 varint overflows", func() error { _, _, err := cp.ReadI16(over32); return err }},
		{"ReadI32 cut", "i32 varint cut off", func() error { _, _, err := cp.ReadI32(cut); return err }},
		{"ReadI32 overflow", "i32 varint overflows", func() error { _, _, err := cp.ReadI32(over32); return err }},
		{"ReadI64 cut", "i64 varint cut off", func() error { _, _, err := cp.ReadI64(cut); return err }},
		{"ReadI64 overflow", "i64 varint overflows", func() error { _, _, err := cp.ReadI64(over64); return err }},
		{"ReadString", "string length varint cut off", func() error { _, _, err := cp.ReadString(cut); return err }},
		{"ReadStringNocopy", "string length varint overflows", func() error { _, _, err := cp.ReadStringNocopy(over32); return err }},
		{"ReadBinary", "binary length varint cut off", func() error { _, _, err := cp.ReadBinary(cut); return err }},
		{"ReadBinaryNocopy", "binary length varint overflows", func() error { _, _, err := cp.ReadBinaryNocopy(over32); return err }},
		{"ReadListBegin", "list size varint cut off", func() error { _, _, _, err := cp.ReadListBegin([]byte{0xf5}); return err }},
		{"ReadSetBegin", "set size varint overflows", func() error {
			_, _, _, err := cp.ReadSetBegin(append([]byte{0xf5}, over32...))
			return err
		}},
		{"ReadMapBegin empty", "map size varint cut off", func() error { _, _, _, _, err := cp.ReadMapBegin(nil); return err }},
		{"ReadMapBegin overflow", "map size varint overflows", func() error { _, _, _, _, err := cp.ReadMapBegin(over32); return err }},
		{"ReadFieldBegin", "field id varint cut off", func() error {
			_, _, _, _, _, err := cp.ReadFieldBegin([]byte{0x05, 0xff}, 0)
			return err
		}},
		{"ReadMessageBegin", "message sequence id varint cut off", func() error {
			_, _, _, _, err := cp.ReadMessageBegin([]byte{0x82, 0x21, 0xff})
			return err
		}},
		{"ReadI32Slice", "i32 varint cut off", func() error { _, err := cp.ReadI32Slice([]byte{0x02, 0xff}, make([]int32, 2)); return err }},
		{"ReadI64Slice", "i64 varint overflows", func() error { _, err := cp.ReadI64Slice(append([]byte{0x02}, over64...), make([]int64, 2)); return err }},
		{"Skip I16 field", "I16 varint cut off", func() error { _, err := cp.Skip([]byte{0x14, 0xff}, thrift.STRUCT, 0); return err }},
		{"Skip I32 field", "I32 varint cut off", func() error { _, err := cp.Skip([]byte{0x15, 0xff}, thrift.STRUCT, 0); return err }},
		{"Skip I64 field", "I64 varint overflows", func() error { _, err := cp.Skip(append([]byte{0x16}, over64...), thrift.STRUCT, 0); return err }},
	}
	for _, c := range cases {
		err := c.read()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if thrift.KindOf(err) != thrift.UnexpectedEOF && thrift.KindOf(err) != thrift.InvalidData {
			t.Errorf("%s: kind %v, want UnexpectedEOF or InvalidData: %v", c.name, thrift.KindOf(err), err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.name, err, c.want)
		}
	}
}
