package thrift

import (
	"bytes"
	"testing"
)

// transcodeStructs returns one struct holding every type (bool fields and
// bool elements, nested struct, list, set, map, empty map) in the binary and
// the compact protocol, written with each protocol's own writer.
func transcodeStructs() (bin, cpt []byte) {
	var s [64]byte
	w := func(dst []byte, n int) []byte { return append(dst, s[:n]...) }
	// Binary.
	bin = w(bin, Binary.WriteFieldBegin(s[:], BOOL, 1))
	bin = w(bin, Binary.WriteBool(s[:], true))
	bin = w(bin, Binary.WriteFieldBegin(s[:], I16, 2))
	bin = w(bin, Binary.WriteI16(s[:], -300))
	bin = w(bin, Binary.WriteFieldBegin(s[:], I64, 40))
	bin = w(bin, Binary.WriteI64(s[:], -1<<40))
	bin = w(bin, Binary.WriteFieldBegin(s[:], DOUBLE, 41))
	bin = w(bin, Binary.WriteDouble(s[:], 0.5))
	bin = w(bin, Binary.WriteFieldBegin(s[:], STRUCT, 3))
	bin = w(bin, Binary.WriteFieldBegin(s[:], STRING, 7))
	bin = w(bin, Binary.WriteString(s[:], "hi"))
	bin = w(bin, Binary.WriteFieldBegin(s[:], BOOL, 8))
	bin = w(bin, Binary.WriteBool(s[:], false))
	bin = w(bin, Binary.WriteFieldStop(s[:]))
	bin = w(bin, Binary.WriteFieldBegin(s[:], LIST, 4))
	bin = w(bin, Binary.WriteListBegin(s[:], BOOL, 2))
	bin = w(bin, Binary.WriteBool(s[:], false))
	bin = w(bin, Binary.WriteBool(s[:], true))
	bin = w(bin, Binary.WriteFieldBegin(s[:], SET, 5))
	bin = w(bin, Binary.WriteSetBegin(s[:], UUID, 1))
	bin = w(bin, Binary.WriteUUID(s[:], Tuuid{1, 2, 3}))
	bin = w(bin, Binary.WriteFieldBegin(s[:], MAP, 6))
	bin = w(bin, Binary.WriteMapBegin(s[:], I32, BYTE, 1))
	bin = w(bin, Binary.WriteI32(s[:], 70000))
	bin = w(bin, Binary.WriteI8(s[:], -1))
	bin = w(bin, Binary.WriteFieldStop(s[:]))
	// Compact.
	cpt = w(cpt, Compact.WriteFieldBool(s[:], 1, 0, true))
	cpt = w(cpt, Compact.WriteFieldBegin(s[:], I16, 2, 1))
	cpt = w(cpt, Compact.WriteI16(s[:], -300))
	cpt = w(cpt, Compact.WriteFieldBegin(s[:], I64, 40, 2))
	cpt = w(cpt, Compact.WriteI64(s[:], -1<<40))
	cpt = w(cpt, Compact.WriteFieldBegin(s[:], DOUBLE, 41, 40))
	cpt = w(cpt, Compact.WriteDouble(s[:], 0.5))
	cpt = w(cpt, Compact.WriteFieldBegin(s[:], STRUCT, 3, 41))
	cpt = w(cpt, Compact.WriteFieldBegin(s[:], STRING, 7, 0))
	cpt = w(cpt, Compact.WriteString(s[:], "hi"))
	cpt = w(cpt, Compact.WriteFieldBool(s[:], 8, 7, false))
	cpt = w(cpt, Compact.WriteFieldStop(s[:]))
	cpt = w(cpt, Compact.WriteFieldBegin(s[:], LIST, 4, 3))
	cpt = w(cpt, Compact.WriteListBegin(s[:], BOOL, 2))
	cpt = w(cpt, Compact.WriteBool(s[:], false))
	cpt = w(cpt, Compact.WriteBool(s[:], true))
	cpt = w(cpt, Compact.WriteFieldBegin(s[:], SET, 5, 4))
	cpt = w(cpt, Compact.WriteSetBegin(s[:], UUID, 1))
	cpt = w(cpt, Compact.WriteUUID(s[:], Tuuid{1, 2, 3}))
	cpt = w(cpt, Compact.WriteFieldBegin(s[:], MAP, 6, 5))
	cpt = w(cpt, Compact.WriteMapBegin(s[:], I32, BYTE, 1))
	cpt = w(cpt, Compact.WriteI32(s[:], 70000))
	cpt = w(cpt, Compact.WriteI8(s[:], -1))
	cpt = w(cpt, Compact.WriteFieldStop(s[:]))
	return bin, cpt
}

func TestUnknownFieldTranscode(t *testing.T) {
	bin, cpt := transcodeStructs()
	gotC, err := Compact.AppendUnknownFromBinary(nil, STRUCT, 9, bin)
	if want := Compact.AppendUnknownField(nil, STRUCT, 9, false, cpt); err != nil || !bytes.Equal(gotC, want) {
		t.Errorf("AppendUnknownFromBinary = %x, %v\nwant %x", gotC, err, want)
	}
	gotB, err := Binary.AppendUnknownFromCompact(nil, STRUCT, 9, false, cpt)
	var hdr [3]byte
	if want := append(hdr[:Binary.WriteFieldBegin(hdr[:], STRUCT, 9)], bin...); err != nil || !bytes.Equal(gotB, want) {
		t.Errorf("AppendUnknownFromCompact = %x, %v\nwant %x", gotB, err, want)
	}
	// Bool fields: the value is the compact header's type.
	if got, err := Compact.AppendUnknownFromBinary(nil, BOOL, 300, []byte{1}); err != nil || !bytes.Equal(got, Compact.AppendUnknownField(nil, BOOL, 300, true, nil)) {
		t.Errorf("bool field to compact = %x, %v", got, err)
	}
	if got, err := Binary.AppendUnknownFromCompact(nil, BOOL, 300, false, nil); err != nil || !bytes.Equal(got, []byte{byte(BOOL), 1, 44, 0}) {
		t.Errorf("bool field to binary = %x, %v", got, err)
	}
	// Empty map: compact has no types for it.
	if got, err := Binary.AppendUnknownFromCompact(nil, MAP, 2, false, []byte{0}); err != nil || len(got) != 3+6 {
		t.Errorf("empty map to binary = %x, %v", got, err)
	}
}

func TestUnknownFieldTranscodeErrors(t *testing.T) {
	bin, cpt := transcodeStructs()
	for i := range bin {
		if _, err := Compact.AppendUnknownFromBinary(nil, STRUCT, 1, bin[:i]); err == nil {
			t.Fatalf("binary cut at %d of %d bytes converted", i, len(bin))
		}
	}
	for i := range cpt {
		if _, err := Binary.AppendUnknownFromCompact(nil, STRUCT, 1, false, cpt[:i]); err == nil {
			t.Fatalf("compact cut at %d of %d bytes converted", i, len(cpt))
		}
	}
	if _, err := Compact.AppendUnknownFromBinary(nil, I32, 1, []byte{0, 0, 0, 1, 9}); err == nil {
		t.Error("a value followed by extra bytes converted")
	}
	// Nesting past the depth limit fails instead of recursing on.
	deep := bytes.Repeat([]byte{byte(LIST), 0, 0, 0, 1}, 100000)
	if _, err := Compact.AppendUnknownFromBinary(nil, LIST, 1, deep); KindOf(err) != DepthLimit {
		t.Errorf("deep binary lists: %v, want a depth limit error", err)
	}
	deepC := bytes.Repeat([]byte{0x19}, 100000)
	if _, err := Binary.AppendUnknownFromCompact(nil, LIST, 1, false, deepC); KindOf(err) != DepthLimit {
		t.Errorf("deep compact lists: %v, want a depth limit error", err)
	}
}

// TestTranscodeEmptyListOfNoType: an unknown field holding an empty binary
// list of element type STOP goes through compact and back with element
// type STOP; it came back as 0xff, which Apache's binary readers refuse.
// An empty compact list of type nibble 0 becomes the same binary list.
func TestTranscodeEmptyListOfNoType(t *testing.T) {
	bin := []byte{byte(STOP), 0, 0, 0, 0}
	cpt, err := Compact.AppendUnknownFromBinary(nil, LIST, 1, bin)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, _, m, err := Compact.ReadFieldBegin(cpt, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{cpt[m:], {0x00}} {
		back, err := Binary.AppendUnknownFromCompact(nil, LIST, 1, false, in)
		if err != nil {
			t.Fatalf("% x: %v", in, err)
		}
		if want := append([]byte{byte(LIST), 0, 1}, bin...); !bytes.Equal(back, want) {
			t.Errorf("compact % x to binary: % x, want % x", in, back, want)
		}
	}
}
