package thrift_test

import (
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

var cp = thrift.Compact

var compactProto = proto{
	name:       "compact",
	fieldBegin: cp.WriteFieldBegin,
	fieldBool:  cp.WriteFieldBool,
	stop:       cp.WriteFieldStop, list: cp.WriteListBegin, set: cp.WriteSetBegin, mapBegin: cp.WriteMapBegin,
	boolean: cp.WriteBool, i8: cp.WriteI8, i16: cp.WriteI16, i32: cp.WriteI32, i64: cp.WriteI64,
	double: cp.WriteDouble, str: cp.WriteString, uuid: cp.WriteUUID, skip: cp.Skip,
}

func init() { protos = append(protos, compactProto) }

func TestCompactBytesOnWire(t *testing.T) {
	b := make([]byte, 64)
	cases := []struct {
		name  string
		write func() int
		want  string
	}{
		{"i32 0", func() int { return cp.WriteI32(b, 0) }, "00"},
		{"i32 -1", func() int { return cp.WriteI32(b, -1) }, "01"},
		{"i32 1", func() int { return cp.WriteI32(b, 1) }, "02"},
		{"i32 63", func() int { return cp.WriteI32(b, 63) }, "7e"},
		{"i32 -64", func() int { return cp.WriteI32(b, -64) }, "7f"},
		{"i32 64", func() int { return cp.WriteI32(b, 64) }, "8001"},
		{"i32 max", func() int { return cp.WriteI32(b, math.MaxInt32) }, "feffffff0f"},
		{"i32 min", func() int { return cp.WriteI32(b, math.MinInt32) }, "ffffffff0f"},
		{"i16 min", func() int { return cp.WriteI16(b, math.MinInt16) }, "ffff03"},
		{"i64 min", func() int { return cp.WriteI64(b, math.MinInt64) }, "ffffffffffffffffff01"},
		{"i64 max", func() int { return cp.WriteI64(b, math.MaxInt64) }, "feffffffffffffffff01"},
		{"i8 -1", func() int { return cp.WriteI8(b, -1) }, "ff"},
		{"double 1.0 little-endian", func() int { return cp.WriteDouble(b, 1) }, "000000000000f03f"},
		{"string hi", func() int { return cp.WriteString(b, "hi") }, "026869"},
		{"binary empty", func() int { return cp.WriteBinary(b, []byte{}) }, "00"},
		{"bool element true", func() int { return cp.WriteBool(b, true) }, "01"},
		{"bool element false", func() int { return cp.WriteBool(b, false) }, "02"},
		{"uuid", func() int { return cp.WriteUUID(b, thrift.Tuuid{0: 0xab, 15: 0xcd}) }, "ab0000000000000000000000000000cd"},
		{"field i32 id 1", func() int { return cp.WriteFieldBegin(b, thrift.I32, 1, 0) }, "15"},
		{"field delta 15", func() int { return cp.WriteFieldBegin(b, thrift.STRING, 15, 0) }, "f8"},
		{"field delta 16: long form", func() int { return cp.WriteFieldBegin(b, thrift.I32, 16, 0) }, "0520"},
		{"field going back: long form", func() int { return cp.WriteFieldBegin(b, thrift.I64, 5, 10) }, "060a"},
		{"field same id: long form", func() int { return cp.WriteFieldBegin(b, thrift.I64, 5, 5) }, "060a"},
		{"field id -1", func() int { return cp.WriteFieldBegin(b, thrift.STRUCT, -1, 0) }, "0c01"},
		{"field id 32767", func() int { return cp.WriteFieldBegin(b, thrift.LIST, 32767, 0) }, "09feff03"},
		{"field uuid", func() int { return cp.WriteFieldBegin(b, thrift.UUID, 2, 1) }, "1d"},
		{"bool field true", func() int { return cp.WriteFieldBool(b, 1, 0, true) }, "11"},
		{"bool field false", func() int { return cp.WriteFieldBool(b, 3, 1, false) }, "22"},
		{"bool field long form", func() int { return cp.WriteFieldBool(b, 100, 1, true) }, "01c801"},
		{"stop", func() int { return cp.WriteFieldStop(b) }, "00"},
		{"list<i32>[3]", func() int { return cp.WriteListBegin(b, thrift.I32, 3) }, "35"},
		{"list<bool>[2]", func() int { return cp.WriteListBegin(b, thrift.BOOL, 2) }, "21"},
		{"list<string>[14]", func() int { return cp.WriteListBegin(b, thrift.STRING, 14) }, "e8"},
		{"list<i8>[15] long form", func() int { return cp.WriteListBegin(b, thrift.BYTE, 15) }, "f30f"},
		{"list<i8>[50399]", func() int { return cp.WriteListBegin(b, thrift.BYTE, 50399) }, "f3df8903"},
		{"set<struct>[0]", func() int { return cp.WriteSetBegin(b, thrift.STRUCT, 0) }, "0c"},
		{"map empty", func() int { return cp.WriteMapBegin(b, thrift.STRING, thrift.I32, 0) }, "00"},
		{"map<string,i32>[2]", func() int { return cp.WriteMapBegin(b, thrift.STRING, thrift.I32, 2) }, "0285"},
		{"map<uuid,double>[200]", func() int { return cp.WriteMapBegin(b, thrift.UUID, thrift.DOUBLE, 200) }, "c801d7"},
		{"message", func() int { return cp.WriteMessageBegin(b, "ping", thrift.CALL, 9) }, "822109" + "0470696e67"},
		{"message seq -1", func() int { return cp.WriteMessageBegin(b, "", thrift.ONEWAY, -1) }, "8281ffffffff0f00"},
		{"i64 slice", func() int { return cp.WriteI64Slice(b, []int64{0, -1, 64}) }, "00018001"},
		{"i32 slice", func() int { return cp.WriteI32Slice(b, []int32{1, -2}) }, "0203"},
		{"double slice", func() int { return cp.WriteDoubleSlice(b, []float64{1}) }, "000000000000f03f"},
	}
	for _, c := range cases {
		n := c.write()
		if got := hex.EncodeToString(b[:n]); got != c.want {
			t.Errorf("%s: wrote %s, want %s", c.name, got, c.want)
		}
	}
}

func TestCompactLengths(t *testing.T) {
	b := make([]byte, 1<<16)
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 8191, -8192, 8192, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		if n := cp.WriteI64(b, v); n != cp.I64Length(v) {
			t.Errorf("I64Length(%d) = %d, wrote %d", v, cp.I64Length(v), n)
		}
		if v == int64(int32(v)) {
			if n := cp.WriteI32(b, int32(v)); n != cp.I32Length(int32(v)) {
				t.Errorf("I32Length(%d) = %d, wrote %d", v, cp.I32Length(int32(v)), n)
			}
		}
		if v == int64(int16(v)) {
			if n := cp.WriteI16(b, int16(v)); n != cp.I16Length(int16(v)) {
				t.Errorf("I16Length(%d) = %d, wrote %d", v, cp.I16Length(int16(v)), n)
			}
		}
	}
	for _, size := range []int{0, 1, 14, 15, 127, 128, 16383, 16384, 1 << 20} {
		if n := cp.WriteListBegin(b, thrift.I32, size); n != cp.ListBeginLength(size) || n != cp.SetBeginLength(size) {
			t.Errorf("ListBeginLength(%d) = %d, wrote %d", size, cp.ListBeginLength(size), n)
		}
		if n := cp.WriteMapBegin(b, thrift.I32, thrift.I32, size); n != cp.MapBeginLength(size) {
			t.Errorf("MapBeginLength(%d) = %d, wrote %d", size, cp.MapBeginLength(size), n)
		}
	}
	for _, s := range []string{"", "x", strings.Repeat("y", 127), strings.Repeat("z", 128), strings.Repeat("w", 20000)} {
		if n := cp.WriteString(b, s); n != cp.StringLength(s) || n != cp.BinaryLength([]byte(s)) {
			t.Errorf("StringLength(len %d) = %d, wrote %d", len(s), cp.StringLength(s), n)
		}
	}
	for _, c := range []struct{ id, last int16 }{{1, 0}, {15, 0}, {16, 0}, {0, 0}, {-1, 0}, {3, 5}, {32767, 0}, {-32768, 0}, {100, 99}} {
		if n := cp.WriteFieldBegin(b, thrift.I32, c.id, c.last); n != cp.FieldBeginLength(thrift.I32, c.id, c.last) {
			t.Errorf("FieldBeginLength(%d after %d) = %d, wrote %d", c.id, c.last, cp.FieldBeginLength(thrift.I32, c.id, c.last), n)
		}
		if n := cp.WriteFieldBool(b, c.id, c.last, true); n != cp.FieldBoolLength(c.id, c.last) {
			t.Errorf("FieldBoolLength(%d after %d) wrong", c.id, c.last)
		}
	}
	for _, seq := range []int32{0, 1, -1, math.MaxInt32} {
		if n := cp.WriteMessageBegin(b, "method", thrift.REPLY, seq); n != cp.MessageBeginLength("method", seq) {
			t.Errorf("MessageBeginLength(seq %d) = %d, wrote %d", seq, cp.MessageBeginLength("method", seq), n)
		}
	}
	i64 := []int64{0, -1, math.MaxInt64, 300}
	if n := cp.WriteI64Slice(b, i64); n != cp.I64SliceLength(i64) {
		t.Errorf("I64SliceLength = %d, wrote %d", cp.I64SliceLength(i64), n)
	}
	i32 := []int32{0, -1, math.MinInt32, 300}
	if n := cp.WriteI32Slice(b, i32); n != cp.I32SliceLength(i32) {
		t.Errorf("I32SliceLength = %d, wrote %d", cp.I32SliceLength(i32), n)
	}
	if cp.DoubleSliceLength(make([]float64, 3)) != 24 || cp.FieldStopLength() != 1 || cp.BoolLength() != 1 ||
		cp.ByteLength() != 1 || cp.DoubleLength() != 8 || cp.UUIDLength() != 16 {
		t.Errorf("fixed compact lengths wrong")
	}
}

func TestCompactScalarsRoundTrip(t *testing.T) {
	b := make([]byte, 64)
	for _, v := range []int16{0, 1, -1, math.MaxInt16, math.MinInt16} {
		n := cp.WriteI16(b, v)
		got, m, err := cp.ReadI16(b[:n])
		if err != nil || got != v || m != n {
			t.Fatalf("i16 %d: %d %d %v", v, got, m, err)
		}
	}
	for _, v := range []int32{0, 1, -1, 63, -64, 64, math.MaxInt32, math.MinInt32} {
		n := cp.WriteI32(b, v)
		got, m, err := cp.ReadI32(b[:n])
		if err != nil || got != v || m != n {
			t.Fatalf("i32 %d: %d %d %v", v, got, m, err)
		}
	}
	for _, v := range []int64{0, 1, -1, 1 << 35, -1 << 35, math.MaxInt64, math.MinInt64} {
		n := cp.WriteI64(b, v)
		got, m, err := cp.ReadI64(b[:n])
		if err != nil || got != v || m != n {
			t.Fatalf("i64 %d: %d %d %v", v, got, m, err)
		}
	}
	for _, v := range []int8{0, -1, math.MaxInt8, math.MinInt8} {
		n := cp.WriteI8(b, v)
		if got, m, err := cp.ReadI8(b[:n]); err != nil || got != v || m != 1 {
			t.Fatalf("i8 %d: %d %d %v", v, got, m, err)
		}
	}
	for _, v := range []float64{0, -1.5, math.MaxFloat64, math.Inf(-1)} {
		n := cp.WriteDouble(b, v)
		if got, m, err := cp.ReadDouble(b[:n]); err != nil || got != v || m != 8 {
			t.Fatalf("double %v: %v %d %v", v, got, m, err)
		}
	}
	for _, v := range []bool{true, false} {
		n := cp.WriteBool(b, v)
		if got, m, err := cp.ReadBool(b[:n]); err != nil || got != v || m != 1 {
			t.Fatalf("bool %v: %v %d %v", v, got, m, err)
		}
	}
	// The specification's false (0) reads as false too.
	if got, _, _ := cp.ReadBool([]byte{0}); got {
		t.Fatal("0 read as true")
	}
	u := thrift.Tuuid{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	n := cp.WriteUUID(b, u)
	if got, m, err := cp.ReadUUID(b[:n]); err != nil || got != u || m != 16 {
		t.Fatalf("uuid: %v %d %v", got, m, err)
	}
	for _, s := range []string{"", "a", strings.Repeat("é", 100)} {
		buf := make([]byte, cp.StringLength(s))
		n := cp.WriteString(buf, s)
		for _, read := range []func([]byte) (string, int, error){cp.ReadString, cp.ReadStringNocopy} {
			if got, m, err := read(buf[:n]); err != nil || got != s || m != n {
				t.Fatalf("string %q: %q %d %v", s, got, m, err)
			}
		}
		n = cp.WriteBinary(buf, []byte(s))
		for _, read := range []func([]byte) ([]byte, int, error){cp.ReadBinary, cp.ReadBinaryNocopy} {
			if got, m, err := read(buf[:n]); err != nil || string(got) != s || m != n || got == nil {
				t.Fatalf("binary %q: %q %d %v", s, got, m, err)
			}
		}
	}
	i64 := []int64{5, -5, math.MinInt64}
	n = cp.WriteI64Slice(b, i64)
	g64 := make([]int64, 3)
	if m, err := cp.ReadI64Slice(b[:n], g64); err != nil || m != n || g64[2] != math.MinInt64 || g64[1] != -5 {
		t.Fatalf("i64 slice: %v %d %v", g64, m, err)
	}
	_, err := cp.ReadI64Slice(b[:n-1], g64)
	wantKind(t, err, thrift.UnexpectedEOF)
	i32 := []int32{5, -5, math.MinInt32}
	n = cp.WriteI32Slice(b, i32)
	g32 := make([]int32, 3)
	if m, err := cp.ReadI32Slice(b[:n], g32); err != nil || m != n || g32[2] != math.MinInt32 {
		t.Fatalf("i32 slice: %v %d %v", g32, m, err)
	}
	_, err = cp.ReadI32Slice(b[:n-1], g32)
	wantKind(t, err, thrift.UnexpectedEOF)
	f := []float64{1, 2}
	n = cp.WriteDoubleSlice(b, f)
	gf := make([]float64, 2)
	if m, err := cp.ReadDoubleSlice(b[:n], gf); err != nil || m != 16 || gf[1] != 2 {
		t.Fatalf("double slice: %v %d %v", gf, m, err)
	}
	_, err = cp.ReadDoubleSlice(b[:15], gf)
	wantKind(t, err, thrift.UnexpectedEOF)
}

func TestCompactFieldHeaders(t *testing.T) {
	b := make([]byte, 16)
	cases := []struct {
		t        TType
		id, last int16
	}{
		{thrift.I32, 1, 0}, {thrift.STRING, 15, 0}, {thrift.I64, 16, 0}, {thrift.STRUCT, 5, 10},
		{thrift.LIST, -1, 0}, {thrift.MAP, 32767, 0}, {thrift.SET, -32768, 5}, {thrift.UUID, 7, 6},
		{thrift.DOUBLE, 0, 0}, {thrift.BYTE, 20, 19}, {thrift.I16, 300, 1},
	}
	for _, c := range cases {
		n := cp.WriteFieldBegin(b, c.t, c.id, c.last)
		ft, id, _, hasBool, m, err := cp.ReadFieldBegin(b[:n], c.last)
		if err != nil || ft != c.t || id != c.id || hasBool || m != n {
			t.Fatalf("%v %d after %d: got %v %d %v %d %v", c.t, c.id, c.last, ft, id, hasBool, m, err)
		}
		for _, v := range []bool{true, false} {
			n = cp.WriteFieldBool(b, c.id, c.last, v)
			ft, id, bv, hasBool, m, err := cp.ReadFieldBegin(b[:n], c.last)
			if err != nil || ft != thrift.BOOL || id != c.id || !hasBool || bv != v || m != n {
				t.Fatalf("bool %v %d after %d: got %v %d %v %v %d %v", v, c.id, c.last, ft, id, bv, hasBool, m, err)
			}
		}
	}
	ft, _, _, _, m, err := cp.ReadFieldBegin([]byte{0}, 7)
	if err != nil || ft != thrift.STOP || m != 1 {
		t.Fatalf("stop: %v %d %v", ft, m, err)
	}
	// Unknown compact types 14 and 15.
	for _, h := range []byte{0x1e, 0x1f} {
		_, _, _, _, _, err = cp.ReadFieldBegin([]byte{h}, 0)
		wantKind(t, err, thrift.InvalidData)
	}
	// Long-form id that does not fit in i16 (zigzag 65536 = 131072).
	_, _, _, _, _, err = cp.ReadFieldBegin([]byte{0x05, 0x80, 0x80, 0x08}, 0)
	wantKind(t, err, thrift.InvalidData)
	// Long-form id cut off.
	_, _, _, _, _, err = cp.ReadFieldBegin([]byte{0x05, 0x80}, 0)
	wantKind(t, err, thrift.UnexpectedEOF)
	_, _, _, _, _, err = cp.ReadFieldBegin(nil, 0)
	wantKind(t, err, thrift.UnexpectedEOF)
}

func TestCompactContainerHeaders(t *testing.T) {
	b := make([]byte, 1<<16)
	for _, size := range []int{0, 1, 14, 15, 16, 300} {
		for _, elem := range []TType{thrift.BOOL, thrift.BYTE, thrift.I16, thrift.I32, thrift.I64, thrift.DOUBLE,
			thrift.STRING, thrift.STRUCT, thrift.MAP, thrift.SET, thrift.LIST, thrift.UUID} {
			n := cp.WriteListBegin(b, elem, size)
			got, gs, m, err := cp.ReadListBegin(b[:n+16*size])
			if err != nil || (size > 0 && got != elem) || gs != size || m != n {
				t.Fatalf("list<%v>[%d]: %v %d %d %v", elem, size, got, gs, m, err)
			}
			if got, gs, m, err = cp.ReadSetBegin(b[:n+16*size]); err != nil || gs != size || m != n {
				t.Fatalf("set<%v>[%d]: %v %d %d %v", elem, size, got, gs, m, err)
			}
			n = cp.WriteMapBegin(b, elem, thrift.I64, size)
			k, v, gs, m, err := cp.ReadMapBegin(b[:n+17*size])
			if err != nil || gs != size || m != n || (size > 0 && (k != elem || v != thrift.I64)) {
				t.Fatalf("map<%v,i64>[%d]: %v %v %d %d %v", elem, size, k, v, gs, m, err)
			}
			if size == 0 && (k != thrift.STOP || v != thrift.STOP || m != 1) {
				t.Fatalf("empty map: %v %v %d", k, v, m)
			}
		}
	}
	// Both bool tags are accepted as element types.
	if elem, size, _, err := cp.ReadListBegin([]byte{0x12, 1}); err != nil || elem != thrift.BOOL || size != 1 {
		t.Fatalf("list with element tag 2: %v %d %v", elem, size, err)
	}
}

func TestCompactLimits(t *testing.T) {
	withLimits(t, thrift.Limits{MaxStringSize: 3, MaxContainerSize: 20})
	b := make([]byte, 64)
	n := cp.WriteString(b, "abcd")
	_, _, err := cp.ReadString(b[:n])
	wantKind(t, err, thrift.SizeLimit)
	_, _, err = cp.ReadBinaryNocopy(b[:n])
	wantKind(t, err, thrift.SizeLimit)
	n = cp.WriteString(b, "abc")
	if _, _, err = cp.ReadString(b[:n]); err != nil {
		t.Fatal(err)
	}
	_, _, err = cp.ReadString(b[:n-1])
	wantKind(t, err, thrift.UnexpectedEOF)
	// A length of 2^31 is negative as an i32.
	_, _, err = cp.ReadBinary([]byte{0x80, 0x80, 0x80, 0x80, 0x08})
	wantKind(t, err, thrift.NegativeSize)

	n = cp.WriteListBegin(b, thrift.I32, 21)
	_, _, _, err = cp.ReadListBegin(b[:n+30])
	wantKind(t, err, thrift.SizeLimit)
	n = cp.WriteMapBegin(b, thrift.I32, thrift.I32, 21)
	_, _, _, _, err = cp.ReadMapBegin(b[:n+50])
	wantKind(t, err, thrift.SizeLimit)
	// Negative list and map sizes.
	_, _, _, err = cp.ReadListBegin([]byte{0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f})
	wantKind(t, err, thrift.NegativeSize)
	_, _, _, _, err = cp.ReadMapBegin([]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x55})
	wantKind(t, err, thrift.NegativeSize)
	// Unknown element type with elements; empty is fine.
	_, _, _, err = cp.ReadListBegin([]byte{0x1e, 0})
	wantKind(t, err, thrift.InvalidData)
	_, _, _, _, err = cp.ReadMapBegin([]byte{0x01, 0x0f, 0})
	wantKind(t, err, thrift.InvalidData)
	if _, _, _, err = cp.ReadListBegin([]byte{0x0e}); err != nil {
		t.Fatalf("empty list of unknown type: %v", err)
	}
	// Bytes left: a list of 3 doubles needs 24 bytes, of 3 uuids 48, of 3 i64s 3.
	for _, c := range []struct {
		elem TType
		need int
	}{{thrift.DOUBLE, 24}, {thrift.UUID, 48}, {thrift.I64, 3}, {thrift.STRING, 3}, {thrift.STRUCT, 3}} {
		n = cp.WriteListBegin(b, c.elem, 3)
		if _, _, _, err = cp.ReadListBegin(b[:n+c.need]); err != nil {
			t.Fatalf("list<%v>[3] in %d: %v", c.elem, c.need, err)
		}
		_, _, _, err = cp.ReadListBegin(b[:n+c.need-1])
		wantKind(t, err, thrift.UnexpectedEOF)
	}
}

func TestCompactHugeListDeclaredFailsFast(t *testing.T) {
	withLimits(t, thrift.Limits{MaxContainerSize: 1<<31 - 1})
	in := []byte{0xf6, 0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0} // list<i64> of 2^31-1, 10 bytes
	_, _, _, err := cp.ReadListBegin(in)
	wantKind(t, err, thrift.UnexpectedEOF)
	if want := "thrift: list of 2147483647 elements declared but only 4 bytes left"; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	if per := bytesPerRun(50, func() { _, _ = cp.Skip(in, thrift.LIST, 0) }); per > 4<<10 {
		t.Fatalf("Skip allocated %d bytes per call for a 10-byte input", per)
	}
}

func TestCompactVarintErrors(t *testing.T) {
	// Six bytes for an i32, or a fifth byte above 0x0f: overflow.
	_, _, err := cp.ReadI32([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	wantKind(t, err, thrift.InvalidData)
	_, _, err = cp.ReadI32([]byte{0x80, 0x80, 0x80, 0x80, 0x10})
	wantKind(t, err, thrift.InvalidData)
	// Eleven bytes for an i64, or a tenth byte above 1.
	_, _, err = cp.ReadI64([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	wantKind(t, err, thrift.InvalidData)
	_, _, err = cp.ReadI64([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02})
	wantKind(t, err, thrift.InvalidData)
	// The same through the bulk reader, after a good element.
	dst := make([]int64, 2)
	_, err = cp.ReadI64Slice([]byte{0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, dst)
	wantKind(t, err, thrift.InvalidData)
	_, err = cp.ReadI64Slice([]byte{0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, dst)
	wantKind(t, err, thrift.InvalidData)
	_, err = cp.ReadI64Slice([]byte{0x02, 0x80}, dst)
	wantKind(t, err, thrift.UnexpectedEOF)
	if n, err := cp.ReadI64Slice([]byte{0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, dst); err != nil || n != 11 || dst[1] != math.MinInt64 {
		t.Fatalf("10-byte element: %d %v %v", n, err, dst)
	}
	// i16 out of range.
	b := make([]byte, 8)
	n := cp.WriteI32(b, 40000)
	_, _, err = cp.ReadI16(b[:n])
	wantKind(t, err, thrift.InvalidData)
	// Cut off.
	for _, in := range [][]byte{nil, {0x80}, {0xff, 0xff}} {
		_, _, err = cp.ReadI32(in)
		wantKind(t, err, thrift.UnexpectedEOF)
		_, _, err = cp.ReadI64(in)
		wantKind(t, err, thrift.UnexpectedEOF)
		_, _, err = cp.ReadI16(in)
		wantKind(t, err, thrift.UnexpectedEOF)
	}
	for _, read := range []func([]byte) error{
		func(b []byte) error { _, _, err := cp.ReadI8(b); return err },
		func(b []byte) error { _, _, err := cp.ReadBool(b); return err },
		func(b []byte) error { _, _, err := cp.ReadDouble(b); return err },
		func(b []byte) error { _, _, err := cp.ReadUUID(b); return err },
		func(b []byte) error { _, _, _, err := cp.ReadListBegin(b); return err },
		func(b []byte) error { _, _, _, _, err := cp.ReadMapBegin(b); return err },
		func(b []byte) error { _, _, _, _, err := cp.ReadMapBegin(b[:1]); return err },
	} {
		wantKind(t, read([]byte{0x02}[:0]), thrift.UnexpectedEOF)
	}
	_, _, _, _, err = cp.ReadMapBegin([]byte{0x02}) // size but no type byte
	wantKind(t, err, thrift.UnexpectedEOF)
}

func TestCompactMessage(t *testing.T) {
	b := make([]byte, 64)
	for _, mt := range []thrift.MessageType{thrift.CALL, thrift.REPLY, thrift.EXCEPTION, thrift.ONEWAY} {
		for _, seq := range []int32{0, 1, -1, math.MaxInt32, math.MinInt32} {
			n := cp.WriteMessageBegin(b, "getUser", mt, seq)
			name, gt, gs, m, err := cp.ReadMessageBegin(b[:n])
			if err != nil || name != "getUser" || gt != mt || gs != seq || m != n {
				t.Fatalf("%v %d: %q %v %d %d %v", mt, seq, name, gt, gs, m, err)
			}
			for i := range n {
				_, _, _, _, err := cp.ReadMessageBegin(b[:i])
				wantKind(t, err, thrift.UnexpectedEOF)
			}
		}
	}
	// A seq id written as a sign-extended 64-bit varint is accepted.
	in := []byte{0x82, 0x21, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00}
	if _, _, seq, _, err := cp.ReadMessageBegin(in); err != nil || seq != -1 {
		t.Fatalf("sign-extended seq: %d %v", seq, err)
	}
	_, _, _, _, err := cp.ReadMessageBegin([]byte{0x80, 0x01, 0, 0})
	wantKind(t, err, thrift.BadVersion)
	_, _, _, _, err = cp.ReadMessageBegin([]byte{0x82, 0x22, 0, 0})
	wantKind(t, err, thrift.BadVersion)
	if !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("message: %v", err)
	}
}

func TestCompactAppendUnknownField(t *testing.T) {
	b := cp.AppendUnknownField(nil, thrift.I32, 7, false, []byte{0x54})
	if hex.EncodeToString(b) != "050e54" {
		t.Fatalf("got %x", b)
	}
	b = cp.AppendUnknownField(b[:0], thrift.BOOL, -2, false, nil)
	if hex.EncodeToString(b) != "0203" {
		t.Fatalf("got %x", b)
	}
	ft, id, v, hasBool, n, err := cp.ReadFieldBegin(b, 100)
	if err != nil || ft != thrift.BOOL || id != -2 || v || !hasBool || n != 2 {
		t.Fatalf("read back: %v %d %v %v %d %v", ft, id, v, hasBool, n, err)
	}
}
