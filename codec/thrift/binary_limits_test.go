package thrift_test

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// withLimits sets the process-wide limits for one test and restores them.
func withLimits(t *testing.T, l thrift.Limits) {
	t.Helper()
	old := thrift.CurrentLimits()
	if err := thrift.SetLimits(l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := thrift.SetLimits(old); err != nil {
			t.Error(err)
		}
	})
}

func TestLimitsDefaultsAndValidate(t *testing.T) {
	d := thrift.DefaultLimits()
	if d.MaxStringSize != 16<<20 || d.MaxContainerSize != 16<<20 || d.MaxDepth != 64 {
		t.Fatalf("DefaultLimits = %+v", d)
	}
	if thrift.CurrentLimits() != d {
		t.Fatalf("CurrentLimits = %+v, want defaults", thrift.CurrentLimits())
	}
	for _, bad := range []thrift.Limits{{MaxStringSize: -1}, {MaxContainerSize: -5}, {MaxDepth: -1}, {MaxStringSize: 1 << 31}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", bad)
		}
		if err := thrift.SetLimits(bad); err == nil {
			t.Errorf("SetLimits(%+v) = nil", bad)
		}
	}
	if thrift.CurrentLimits() != d {
		t.Fatalf("a rejected SetLimits changed the limits: %+v", thrift.CurrentLimits())
	}
	withLimits(t, thrift.Limits{MaxDepth: 3})
	if got := thrift.CurrentLimits(); got.MaxDepth != 3 || got.MaxStringSize != d.MaxStringSize {
		t.Fatalf("zero fields did not mean default: %+v", got)
	}
}

func TestBinaryStringLimits(t *testing.T) {
	withLimits(t, thrift.Limits{MaxStringSize: 10})
	b := make([]byte, 64)
	n := bp.WriteString(b, "0123456789")
	if _, _, err := bp.ReadString(b[:n]); err != nil {
		t.Fatalf("string at the limit: %v", err)
	}
	n = bp.WriteString(b, "0123456789a")
	_, _, err := bp.ReadString(b[:n])
	wantKind(t, err, thrift.SizeLimit)
	if !errors.Is(err, thrift.ErrSizeLimit) || !strings.Contains(err.Error(), "string of 11 bytes exceeds the limit of 10") {
		t.Fatalf("message: %v", err)
	}
	_, _, err = bp.ReadBinary(b[:n])
	wantKind(t, err, thrift.SizeLimit)
	_, _, err = bp.ReadStringNocopy(b[:n])
	wantKind(t, err, thrift.SizeLimit)
	_, _, err = bp.ReadBinaryNocopy(b[:n])
	wantKind(t, err, thrift.SizeLimit)

	// Negative.
	binary.BigEndian.PutUint32(b, 0xffffffff)
	_, _, err = bp.ReadString(b[:8])
	wantKind(t, err, thrift.NegativeSize)
	if !strings.Contains(err.Error(), "string size -1 is negative") {
		t.Fatalf("message: %v", err)
	}
	// Longer than what is left.
	binary.BigEndian.PutUint32(b, 5)
	_, _, err = bp.ReadBinary(b[:8])
	wantKind(t, err, thrift.UnexpectedEOF)
	if !strings.Contains(err.Error(), "binary of 5 bytes declared but only 4 bytes left") {
		t.Fatalf("message: %v", err)
	}
}

func TestBinaryContainerLimits(t *testing.T) {
	withLimits(t, thrift.Limits{MaxContainerSize: 4})
	b := make([]byte, 64)
	n := bp.WriteListBegin(b, thrift.BOOL, 4)
	if _, _, _, err := bp.ReadListBegin(b[:n+4]); err != nil {
		t.Fatalf("list at the limit: %v", err)
	}
	n = bp.WriteListBegin(b, thrift.BOOL, 5)
	_, _, _, err := bp.ReadListBegin(b[:n+5])
	wantKind(t, err, thrift.SizeLimit)
	if !strings.Contains(err.Error(), "list of 5 elements exceeds the limit of 4") {
		t.Fatalf("message: %v", err)
	}
	n = bp.WriteSetBegin(b, thrift.BOOL, 5)
	_, _, _, err = bp.ReadSetBegin(b[:n+5])
	wantKind(t, err, thrift.SizeLimit)
	n = bp.WriteMapBegin(b, thrift.BOOL, thrift.BOOL, 5)
	_, _, _, _, err = bp.ReadMapBegin(b[:n+10])
	wantKind(t, err, thrift.SizeLimit)

	n = bp.WriteListBegin(b, thrift.I32, -1)
	_, _, _, err = bp.ReadListBegin(b[:n])
	wantKind(t, err, thrift.NegativeSize)
	n = bp.WriteMapBegin(b, thrift.I32, thrift.I32, -7)
	_, _, _, _, err = bp.ReadMapBegin(b[:n])
	wantKind(t, err, thrift.NegativeSize)

	// Unknown element type with elements.
	n = bp.WriteListBegin(b, thrift.TType(99), 1)
	_, _, _, err = bp.ReadListBegin(b[:n+10])
	wantKind(t, err, thrift.InvalidData)
	// ...but an empty list of anything is fine.
	n = bp.WriteListBegin(b, thrift.TType(99), 0)
	if _, _, _, err = bp.ReadListBegin(b[:n]); err != nil {
		t.Fatalf("empty list of unknown type: %v", err)
	}
}

// Each element needs at least its smallest wire size in the bytes left.
func TestBinaryContainerBytesLeft(t *testing.T) {
	cases := []struct {
		elem TType
		min  int
	}{
		{thrift.BOOL, 1}, {thrift.BYTE, 1}, {thrift.I16, 2}, {thrift.I32, 4}, {thrift.I64, 8},
		{thrift.DOUBLE, 8}, {thrift.STRING, 4}, {thrift.STRUCT, 1}, {thrift.MAP, 6},
		{thrift.SET, 5}, {thrift.LIST, 5}, {thrift.UUID, 16},
	}
	b := make([]byte, 256)
	for _, c := range cases {
		n := bp.WriteListBegin(b, c.elem, 3)
		if _, size, _, err := bp.ReadListBegin(b[:n+3*c.min]); err != nil || size != 3 {
			t.Fatalf("list<%v> of 3 in %d bytes: %v", c.elem, 3*c.min, err)
		}
		_, _, _, err := bp.ReadListBegin(b[:n+3*c.min-1])
		wantKind(t, err, thrift.UnexpectedEOF)
		// A map entry needs key and value.
		n = bp.WriteMapBegin(b, c.elem, thrift.I32, 3)
		if _, _, _, _, err := bp.ReadMapBegin(b[:n+3*(c.min+4)]); err != nil {
			t.Fatalf("map<%v,i32> of 3: %v", c.elem, err)
		}
		_, _, _, _, err = bp.ReadMapBegin(b[:n+3*(c.min+4)-1])
		wantKind(t, err, thrift.UnexpectedEOF)
	}
}

type TType = thrift.TType

// A 10-byte input that declares a list of 2^31-1 i64s fails at once, without
// allocating anything like the declared size.
func TestBinaryHugeListDeclaredFailsFast(t *testing.T) {
	in := []byte{byte(thrift.I64), 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0}
	_, _, _, err := bp.ReadListBegin(in)
	wantKind(t, err, thrift.SizeLimit)
	withLimits(t, thrift.Limits{MaxContainerSize: 1<<31 - 1})
	_, _, _, err = bp.ReadListBegin(in)
	wantKind(t, err, thrift.UnexpectedEOF)
	if want := "thrift: list of 2147483647 elements declared but only 5 bytes left"; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	// Skip of the same input: an error, and almost no memory.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = bp.Skip(in, thrift.LIST, 0)
	runtime.ReadMemStats(&after)
	wantKind(t, err, thrift.UnexpectedEOF)
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
		t.Fatalf("Skip allocated %d bytes for a 10-byte input", d)
	}
	// The error path allocates only the error and its message (a byte
	// bound: the count varies with the race runtime).
	if per := bytesPerRun(100, func() {
		if _, _, _, err := bp.ReadListBegin(in); err == nil {
			t.Fatal("no error")
		}
	}); per > 4<<10 {
		t.Fatalf("ReadListBegin allocated %d bytes per call on the error path", per)
	}
}

// bytesPerRun returns the bytes f allocates per call, averaged over n calls.
func bytesPerRun(n int, f func()) uint64 {
	f() // warm up lazy initialisation
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

func TestBinaryNonStrictMessage(t *testing.T) {
	// Old form: i32 name length, name, type byte, i32 seq.
	in := []byte{0, 0, 0, 3, 'a', 'd', 'd', byte(thrift.ONEWAY), 0xff, 0xff, 0xff, 0xfe, 0xee}
	name, mt, seq, n, err := bp.ReadMessageBegin(in)
	if err != nil || name != "add" || mt != thrift.ONEWAY || seq != -2 || n != 12 {
		t.Fatalf("non-strict: %q %v %d %d %v", name, mt, seq, n, err)
	}
	for i := range 12 {
		_, _, _, _, err := bp.ReadMessageBegin(in[:i])
		wantKind(t, err, thrift.UnexpectedEOF)
	}
	// Strict with a wrong version.
	bad := []byte{0x80, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1}
	_, _, _, _, err = bp.ReadMessageBegin(bad)
	wantKind(t, err, thrift.BadVersion)
	if !strings.Contains(err.Error(), "0x80020001") {
		t.Fatalf("message: %v", err)
	}
	// Name too long for the limit.
	withLimits(t, thrift.Limits{MaxStringSize: 2})
	_, _, _, _, err = bp.ReadMessageBegin(in)
	wantKind(t, err, thrift.SizeLimit)
}
