package thrift_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

var bp = thrift.Binary

func wantKind(t *testing.T, err error, k thrift.ErrorKind) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want kind %v", k)
	}
	var pe *thrift.ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ProtocolError", err, err)
	}
	if pe.Kind != k {
		t.Fatalf("error %q has kind %v, want %v", err, pe.Kind, k)
	}
	if thrift.KindOf(err) != k {
		t.Fatalf("KindOf(%q) = %v, want %v", err, thrift.KindOf(err), k)
	}
}

func TestBinaryScalarsRoundTrip(t *testing.T) {
	b := make([]byte, 64)
	for _, v := range []bool{true, false} {
		n := bp.WriteBool(b, v)
		got, m, err := bp.ReadBool(b[:n])
		if err != nil || got != v || m != thrift.BoolLength || n != thrift.BoolLength {
			t.Fatalf("bool %v: got %v %d %d %v", v, got, n, m, err)
		}
	}
	for _, v := range []int8{0, 1, -1, math.MaxInt8, math.MinInt8} {
		n := bp.WriteI8(b, v)
		got, m, err := bp.ReadI8(b[:n])
		if err != nil || got != v || m != 1 || n != 1 {
			t.Fatalf("i8 %v: got %v %d %d %v", v, got, n, m, err)
		}
	}
	for _, v := range []int16{0, 1, -1, math.MaxInt16, math.MinInt16} {
		n := bp.WriteI16(b, v)
		got, m, err := bp.ReadI16(b[:n])
		if err != nil || got != v || m != 2 || n != 2 {
			t.Fatalf("i16 %v: got %v %d %d %v", v, got, n, m, err)
		}
	}
	for _, v := range []int32{0, 1, -1, math.MaxInt32, math.MinInt32} {
		n := bp.WriteI32(b, v)
		got, m, err := bp.ReadI32(b[:n])
		if err != nil || got != v || m != 4 || n != 4 {
			t.Fatalf("i32 %v: got %v %d %d %v", v, got, n, m, err)
		}
	}
	for _, v := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64} {
		n := bp.WriteI64(b, v)
		got, m, err := bp.ReadI64(b[:n])
		if err != nil || got != v || m != 8 || n != 8 {
			t.Fatalf("i64 %v: got %v %d %d %v", v, got, n, m, err)
		}
	}
	for _, v := range []float64{0, math.Copysign(0, -1), 1.5, -2.25, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1)} {
		n := bp.WriteDouble(b, v)
		got, m, err := bp.ReadDouble(b[:n])
		if err != nil || math.Float64bits(got) != math.Float64bits(v) || m != 8 || n != 8 {
			t.Fatalf("double %v: got %v %d %d %v", v, got, n, m, err)
		}
	}
	nan := math.Float64frombits(0x7ff8000000000001)
	n := bp.WriteDouble(b, nan)
	if got, _, _ := bp.ReadDouble(b[:n]); math.Float64bits(got) != 0x7ff8000000000001 {
		t.Fatalf("NaN payload lost: %x", math.Float64bits(got))
	}
	u := thrift.Tuuid{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}
	n = bp.WriteUUID(b, u)
	if !bytes.Equal(b[:n], u[:]) {
		t.Fatalf("uuid bytes %x", b[:n])
	}
	gu, m, err := bp.ReadUUID(b[:n])
	if err != nil || gu != u || m != 16 {
		t.Fatalf("uuid: %v %d %v", gu, m, err)
	}
}

func TestBinaryBytesOnWire(t *testing.T) {
	b := make([]byte, 64)
	cases := []struct {
		name  string
		write func() int
		want  string
	}{
		{"i16 -2", func() int { return bp.WriteI16(b, -2) }, "fffe"},
		{"i32", func() int { return bp.WriteI32(b, 0x01020304) }, "01020304"},
		{"i64 -1", func() int { return bp.WriteI64(b, -1) }, "ffffffffffffffff"},
		{"double 1.0", func() int { return bp.WriteDouble(b, 1) }, "3ff0000000000000"},
		{"field i32 id 7", func() int { return bp.WriteFieldBegin(b, thrift.I32, 7) }, "080007"},
		{"field id -1", func() int { return bp.WriteFieldBegin(b, thrift.STRING, -1) }, "0bffff"},
		{"stop", func() int { return bp.WriteFieldStop(b) }, "00"},
		{"list<i64>[3]", func() int { return bp.WriteListBegin(b, thrift.I64, 3) }, "0a00000003"},
		{"set<string>[1]", func() int { return bp.WriteSetBegin(b, thrift.STRING, 1) }, "0b00000001"},
		{"map<i32,string>[2]", func() int { return bp.WriteMapBegin(b, thrift.I32, thrift.STRING, 2) }, "080b00000002"},
		{"string hi", func() int { return bp.WriteString(b, "hi") }, "000000026869"},
		{"binary empty", func() int { return bp.WriteBinary(b, nil) }, "00000000"},
		{"bool true", func() int { return bp.WriteBool(b, true) }, "01"},
		{"i8 -128", func() int { return bp.WriteI8(b, -128) }, "80"},
		{"message", func() int { return bp.WriteMessageBegin(b, "ping", thrift.CALL, 9) }, "80010001" + "0000000470696e67" + "00000009"},
		{"i64 slice", func() int { return bp.WriteI64Slice(b, []int64{1, -1}) }, "0000000000000001ffffffffffffffff"},
		{"i32 slice", func() int { return bp.WriteI32Slice(b, []int32{1, -2}) }, "00000001fffffffe"},
		{"double slice", func() int { return bp.WriteDoubleSlice(b, []float64{1, -2}) }, "3ff0000000000000c000000000000000"},
	}
	for _, c := range cases {
		n := c.write()
		if got := hex.EncodeToString(b[:n]); got != c.want {
			t.Errorf("%s: wrote %s, want %s", c.name, got, c.want)
		}
	}
	if got := bp.MessageBeginLength("ping"); got != 16 {
		t.Errorf("MessageBeginLength = %d", got)
	}
	if bp.StringLength("abc") != 7 || bp.BinaryLength([]byte{1}) != 5 {
		t.Errorf("StringLength/BinaryLength wrong")
	}
}

func TestBinaryHeadersRoundTrip(t *testing.T) {
	b := make([]byte, 64)
	n := bp.WriteFieldBegin(b, thrift.STRUCT, -32768)
	ft, id, m, err := bp.ReadFieldBegin(b[:n])
	if err != nil || ft != thrift.STRUCT || id != -32768 || m != 3 {
		t.Fatalf("field: %v %d %d %v", ft, id, m, err)
	}
	n = bp.WriteFieldStop(b)
	if ft, _, m, err = bp.ReadFieldBegin(b[:n]); err != nil || ft != thrift.STOP || m != 1 {
		t.Fatalf("stop: %v %d %v", ft, m, err)
	}
	// A list header is checked against the bytes after it, so leave room.
	n = bp.WriteListBegin(b, thrift.I32, 3)
	elem, size, m, err := bp.ReadListBegin(b[:n+12])
	if err != nil || elem != thrift.I32 || size != 3 || m != 5 {
		t.Fatalf("list: %v %d %d %v", elem, size, m, err)
	}
	n = bp.WriteSetBegin(b, thrift.STRUCT, 0)
	if elem, size, m, err = bp.ReadSetBegin(b[:n]); err != nil || elem != thrift.STRUCT || size != 0 || m != 5 {
		t.Fatalf("set: %v %d %d %v", elem, size, m, err)
	}
	n = bp.WriteMapBegin(b, thrift.STRING, thrift.BOOL, 2)
	k, v, size, m, err := bp.ReadMapBegin(b[:n+10])
	if err != nil || k != thrift.STRING || v != thrift.BOOL || size != 2 || m != 6 {
		t.Fatalf("map: %v %v %d %d %v", k, v, size, m, err)
	}
	for _, mt := range []thrift.MessageType{thrift.CALL, thrift.REPLY, thrift.EXCEPTION, thrift.ONEWAY} {
		n = bp.WriteMessageBegin(b, "method", mt, -5)
		name, gt, seq, m, err := bp.ReadMessageBegin(b[:n])
		if err != nil || name != "method" || gt != mt || seq != -5 || m != n {
			t.Fatalf("message %v: %q %v %d %d %v", mt, name, gt, seq, m, err)
		}
	}
}

func TestBinaryStrings(t *testing.T) {
	b := make([]byte, 1<<14)
	for _, s := range []string{"", "a", "héllo", strings.Repeat("x", 5000)} {
		n := bp.WriteString(b, s)
		if n != bp.StringLength(s) {
			t.Fatalf("WriteString returned %d, StringLength %d", n, bp.StringLength(s))
		}
		got, m, err := bp.ReadString(b[:n])
		if err != nil || got != s || m != n {
			t.Fatalf("ReadString: %d %v", m, err)
		}
		got, m, err = bp.ReadStringNocopy(b[:n])
		if err != nil || got != s || m != n {
			t.Fatalf("ReadStringNocopy: %d %v", m, err)
		}
		n = bp.WriteBinary(b, []byte(s))
		gb, m, err := bp.ReadBinary(b[:n])
		if err != nil || string(gb) != s || m != n || gb == nil {
			t.Fatalf("ReadBinary: %d %v (nil=%v)", m, err, gb == nil)
		}
		gb, m, err = bp.ReadBinaryNocopy(b[:n])
		if err != nil || string(gb) != s || m != n || cap(gb) != len(gb) {
			t.Fatalf("ReadBinaryNocopy: %d %v cap %d", m, err, cap(gb))
		}
	}
	// Copying readers do not alias; nocopy readers do.
	n := bp.WriteString(b, "abc")
	cp, _, _ := bp.ReadString(b[:n])
	nc, _, _ := bp.ReadStringNocopy(b[:n])
	bb, _, _ := bp.ReadBinary(b[:n])
	bn, _, _ := bp.ReadBinaryNocopy(b[:n])
	b[4] = 'z'
	if cp != "abc" || string(bb) != "abc" {
		t.Fatalf("copying readers alias the input: %q %q", cp, bb)
	}
	if nc != "zbc" || string(bn) != "zbc" {
		t.Fatalf("nocopy readers copied: %q %q", nc, bn)
	}
}

func TestBinaryBulkSlices(t *testing.T) {
	i64 := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 42}
	i32 := []int32{0, 1, -1, math.MaxInt32, math.MinInt32}
	f64 := []float64{0, -0.5, math.Inf(1), 3.25}
	b := make([]byte, 128)
	n := bp.WriteI64Slice(b, i64)
	g64 := make([]int64, len(i64))
	if m, err := bp.ReadI64Slice(b[:n], g64); err != nil || m != n || n != 8*len(i64) {
		t.Fatalf("i64 slice: %d %d %v", n, m, err)
	}
	for i := range i64 {
		if g64[i] != i64[i] {
			t.Fatalf("i64[%d] = %d, want %d", i, g64[i], i64[i])
		}
		// Each element matches the scalar encoding.
		v, _, _ := bp.ReadI64(b[8*i:])
		if v != i64[i] {
			t.Fatalf("scalar read of element %d = %d", i, v)
		}
	}
	n = bp.WriteI32Slice(b, i32)
	g32 := make([]int32, len(i32))
	if m, err := bp.ReadI32Slice(b[:n], g32); err != nil || m != n || n != 4*len(i32) {
		t.Fatalf("i32 slice: %d %d %v", n, m, err)
	}
	for i := range i32 {
		if g32[i] != i32[i] {
			t.Fatalf("i32[%d] = %d, want %d", i, g32[i], i32[i])
		}
	}
	n = bp.WriteDoubleSlice(b, f64)
	gf := make([]float64, len(f64))
	if m, err := bp.ReadDoubleSlice(b[:n], gf); err != nil || m != n {
		t.Fatalf("double slice: %d %d %v", n, m, err)
	}
	for i := range f64 {
		if math.Float64bits(gf[i]) != math.Float64bits(f64[i]) {
			t.Fatalf("double[%d] = %v, want %v", i, gf[i], f64[i])
		}
	}
	// Short input: typed error, dst untouched beyond what is checked.
	_, err := bp.ReadI64Slice(b[:15], make([]int64, 2))
	wantKind(t, err, thrift.UnexpectedEOF)
	_, err = bp.ReadI32Slice(b[:7], make([]int32, 2))
	wantKind(t, err, thrift.UnexpectedEOF)
	_, err = bp.ReadDoubleSlice(b[:0], make([]float64, 1))
	wantKind(t, err, thrift.UnexpectedEOF)
}

func TestBinaryShortInputs(t *testing.T) {
	full := make([]byte, 64)
	n := bp.WriteMessageBegin(full, "name", thrift.REPLY, 1)
	msg := append([]byte(nil), full[:n]...)
	reads := map[string]func([]byte) error{
		"bool":    func(b []byte) error { _, _, err := bp.ReadBool(b); return err },
		"i8":      func(b []byte) error { _, _, err := bp.ReadI8(b); return err },
		"i16":     func(b []byte) error { _, _, err := bp.ReadI16(b); return err },
		"i32":     func(b []byte) error { _, _, err := bp.ReadI32(b); return err },
		"i64":     func(b []byte) error { _, _, err := bp.ReadI64(b); return err },
		"double":  func(b []byte) error { _, _, err := bp.ReadDouble(b); return err },
		"uuid":    func(b []byte) error { _, _, err := bp.ReadUUID(b); return err },
		"string":  func(b []byte) error { _, _, err := bp.ReadString(b); return err },
		"binary":  func(b []byte) error { _, _, err := bp.ReadBinary(b); return err },
		"field":   func(b []byte) error { _, _, _, err := bp.ReadFieldBegin(b); return err },
		"list":    func(b []byte) error { _, _, _, err := bp.ReadListBegin(b); return err },
		"set":     func(b []byte) error { _, _, _, err := bp.ReadSetBegin(b); return err },
		"map":     func(b []byte) error { _, _, _, _, err := bp.ReadMapBegin(b); return err },
		"message": func(b []byte) error { _, _, _, _, err := bp.ReadMessageBegin(b); return err },
	}
	sizes := map[string]int{"bool": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "double": 8, "uuid": 16,
		"string": 4, "binary": 4, "field": 3, "list": 5, "set": 5, "map": 6, "message": n}
	for name, read := range reads {
		src := []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
		if name == "message" {
			src = msg
		}
		if name == "string" || name == "binary" || name == "list" || name == "set" || name == "map" {
			src = make([]byte, 16) // zero sizes, zero element types
			switch name {
			case "list", "set":
				src[0] = byte(thrift.I32)
			case "map":
				src[0], src[1] = byte(thrift.I32), byte(thrift.I32)
			}
		}
		for i := 0; i < sizes[name]; i++ {
			err := read(src[:i])
			wantKind(t, err, thrift.UnexpectedEOF)
			if !errors.Is(err, thrift.ErrUnexpectedEOF) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%s: errors.Is fails for %v", name, err)
			}
		}
		if err := read(src[:sizes[name]]); err != nil {
			t.Fatalf("%s with %d bytes: %v", name, sizes[name], err)
		}
	}
}
