package thrift_test

import (
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// TestCompactSkipI16OutOfRange: an i16 whose varint holds a value that does
// not fit 16 bits is rejected by ReadI16, so Skip must reject it too, as a
// field and as a list element (found by FuzzCompactSkip, input d596791636e2f44d).
func TestCompactSkipI16OutOfRange(t *testing.T) {
	var v [8]byte
	n := cp.WriteI32(v[:], 40000) // an i32 varint: zigzag 80000, 3 bytes
	if _, _, err := cp.ReadI16(v[:n]); err == nil {
		t.Fatal("ReadI16 took 40000")
	}
	field := append([]byte{0x14}, v[:n]...) // field 1, i16
	field = append(field, 0)                // stop
	list := append([]byte{0x14}, v[:n]...)  // one i16
	for _, c := range []struct {
		name string
		in   []byte
		t    thrift.TType
	}{
		{"struct field", field, thrift.STRUCT},
		{"list element", list, thrift.LIST},
		{"bare value", v[:n], thrift.I16},
	} {
		m, err := cp.Skip(c.in, c.t, 0)
		if err == nil || thrift.KindOf(err) != thrift.InvalidData {
			t.Errorf("%s: Skip = %d, %v; want an InvalidData error", c.name, m, err)
		}
	}
	// In range, the same encoding skips.
	n = cp.WriteI16(v[:], -32768)
	if m, err := cp.Skip(v[:n], thrift.I16, 0); err != nil || m != n {
		t.Errorf("Skip of i16 -32768 = %d, %v; want %d", m, err, n)
	}
}
