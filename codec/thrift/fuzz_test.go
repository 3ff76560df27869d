package thrift_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// allocBudget is how much a decoder may allocate for an input of n bytes.
func allocBudget(n int) uint64 { return uint64(2*n + 64<<10) }

// measure runs f and returns the bytes it allocated (approximately: anything
// else running in the process counts too, which only makes the check stricter).
func measure(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func skipSeeds(f *testing.F, p proto) {
	f.Add(everything(newEnc(p)).bytes(), byte(thrift.STRUCT))
	f.Add(nested(p, thrift.LIST, 70), byte(thrift.LIST))
	f.Add(nested(p, thrift.MAP, 10), byte(thrift.MAP))
	f.Add([]byte{byte(thrift.I64), 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0}, byte(thrift.LIST))
	f.Add([]byte{0xf6, 0xff, 0xff, 0xff, 0xff, 0x07, 0, 0, 0, 0}, byte(thrift.LIST))
	f.Add([]byte{}, byte(thrift.STRING))
}

func fuzzSkip(t *testing.T, p proto, in []byte, typ byte) {
	var n int
	var err error
	used := measure(func() { n, err = p.skip(in, thrift.TType(typ), 0) })
	if err == nil && (n <= 0 || n > len(in)) {
		t.Fatalf("Skip consumed %d of %d bytes without error", n, len(in))
	}
	if err != nil && thrift.KindOf(err) == 0 {
		t.Fatalf("untyped error %v", err)
	}
	if used > allocBudget(len(in)) {
		t.Fatalf("Skip allocated %d bytes for %d input bytes", used, len(in))
	}
	fullRead(t, p.name == compactProto.name, in, thrift.TType(typ), n, err)
}

// fullRead checks Skip against a reader that decodes every value: the
// converter to the other protocol (what a proxy does with unknown fields).
// It must fail where Skip failed, and take exactly the n bytes Skip measured
// where Skip succeeded; what it writes must skip to its end in the other
// protocol, and convert back to a value that skips to its end again.
func fullRead(t *testing.T, compact bool, in []byte, typ thrift.TType, n int, skipErr error) {
	t.Helper()
	// toOther converts a value of this protocol (compact if c) into the
	// other one, and returns the converted value without its field header.
	toOther := func(c bool, v []byte) ([]byte, bool, error) {
		if c {
			out, err := bp.AppendUnknownFromCompact(nil, typ, 1, false, v)
			if err != nil {
				return nil, false, err
			}
			_, _, m, err := bp.ReadFieldBegin(out)
			if err != nil {
				t.Fatalf("converted field header %x: %v", out, err)
			}
			return out[m:], false, nil
		}
		out, err := cp.AppendUnknownFromBinary(nil, typ, 1, v)
		if err != nil {
			return nil, false, err
		}
		_, _, _, hasBool, m, err := cp.ReadFieldBegin(out, 0)
		if err != nil {
			t.Fatalf("converted field header %x: %v", out, err)
		}
		return out[m:], hasBool, nil
	}
	skipIn := func(c bool, v []byte) (int, error) {
		if c {
			return cp.Skip(v, typ, 0)
		}
		return bp.Skip(v, typ, 0)
	}
	if skipErr != nil {
		if compact && typ == thrift.BOOL && len(in) == 0 {
			return // for the converter, no bytes means a bool in the field header
		}
		if _, _, err := toOther(compact, in); err == nil {
			t.Fatalf("Skip failed (%v) but the full reader took the value", skipErr)
		}
		return
	}
	other, inHeader, err := toOther(compact, in[:n])
	if err != nil {
		t.Fatalf("Skip took %d bytes but the full reader failed on them: %v", n, err)
	}
	if inHeader { // a compact bool field carries its value in the header
		return
	}
	if m, err := skipIn(!compact, other); err != nil || m != len(other) {
		t.Fatalf("converted value of %d bytes skips %d, %v", len(other), m, err)
	}
	back, inHeader, err := toOther(!compact, other)
	if err != nil {
		t.Fatalf("converting back: %v", err)
	}
	if inHeader {
		return
	}
	if m, err := skipIn(compact, back); err != nil || m != len(back) {
		t.Fatalf("value converted back, %d bytes, skips %d, %v", len(back), m, err)
	}
}

func FuzzBinarySkip(f *testing.F) {
	skipSeeds(f, binaryProto)
	f.Fuzz(func(t *testing.T, in []byte, typ byte) { fuzzSkip(t, binaryProto, in, typ) })
}

func FuzzCompactSkip(f *testing.F) {
	skipSeeds(f, compactProto)
	f.Fuzz(func(t *testing.T, in []byte, typ byte) { fuzzSkip(t, compactProto, in, typ) })
}

func FuzzBinaryMessageBegin(f *testing.F) {
	b := make([]byte, 64)
	f.Add(b[:bp.WriteMessageBegin(b, "ping", thrift.CALL, 1)])
	f.Add([]byte{0, 0, 0, 3, 'a', 'd', 'd', 1, 0, 0, 0, 1})
	f.Add([]byte{0x80, 0x01, 0, 1, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		var name string
		var mt thrift.MessageType
		var seq int32
		var n int
		var err error
		used := measure(func() { name, mt, seq, n, err = bp.ReadMessageBegin(in) })
		if used > allocBudget(len(in)) {
			t.Fatalf("allocated %d bytes for %d input bytes", used, len(in))
		}
		if err != nil {
			return
		}
		if n > len(in) {
			t.Fatalf("consumed %d of %d", n, len(in))
		}
		// Strict headers re-encode to the same bytes.
		if in[0]&0x80 != 0 && in[2] == 0 {
			out := make([]byte, bp.MessageBeginLength(name))
			if m := bp.WriteMessageBegin(out, name, mt, seq); string(out[:m]) != string(in[:n]) {
				t.Fatalf("re-encoded %x, read %x", out[:m], in[:n])
			}
		}
	})
}

func FuzzCompactMessageBegin(f *testing.F) {
	b := make([]byte, 64)
	f.Add(b[:cp.WriteMessageBegin(b, "ping", thrift.CALL, -1)])
	f.Fuzz(func(t *testing.T, in []byte) {
		used := measure(func() { _, _, _, _, _ = cp.ReadMessageBegin(in) })
		if used > allocBudget(len(in)) {
			t.Fatalf("allocated %d bytes for %d input bytes", used, len(in))
		}
	})
}

// FuzzCompactRoundTrip writes values with the compact protocol, reads them
// back and checks the lengths the writers promise.
func FuzzCompactRoundTrip(f *testing.F) {
	f.Add(int64(0), int32(0), int16(0), int16(0), int16(0), 0.0, "", true)
	f.Add(int64(math.MinInt64), int32(math.MinInt32), int16(math.MinInt16), int16(16), int16(0), math.Inf(1), "héllo", false)
	f.Fuzz(func(t *testing.T, i64 int64, i32 int32, i16 int16, id, last int16, d float64, s string, bv bool) {
		b := make([]byte, 64+len(s))
		n := cp.WriteFieldBegin(b, thrift.I64, id, last)
		if n != cp.FieldBeginLength(thrift.I64, id, last) {
			t.Fatalf("FieldBeginLength mismatch")
		}
		n += cp.WriteI64(b[n:], i64)
		n += cp.WriteI32(b[n:], i32)
		n += cp.WriteI16(b[n:], i16)
		n += cp.WriteDouble(b[n:], d)
		n += cp.WriteString(b[n:], s)
		n += cp.WriteFieldBool(b[n:], id, last, bv)
		want := cp.FieldBeginLength(thrift.I64, id, last) + cp.I64Length(i64) + cp.I32Length(i32) +
			cp.I16Length(i16) + 8 + cp.StringLength(s) + cp.FieldBoolLength(id, last)
		if n != want {
			t.Fatalf("wrote %d, lengths say %d", n, want)
		}
		in := b[:n]
		ft, gid, _, _, m, err := cp.ReadFieldBegin(in, last)
		if err != nil || ft != thrift.I64 || gid != id {
			t.Fatalf("field: %v %d %v", ft, gid, err)
		}
		p := m
		g64, m, err := cp.ReadI64(in[p:])
		if err != nil || g64 != i64 {
			t.Fatalf("i64 %d: %d %v", i64, g64, err)
		}
		p += m
		g32, m, err := cp.ReadI32(in[p:])
		if err != nil || g32 != i32 {
			t.Fatalf("i32 %d: %d %v", i32, g32, err)
		}
		p += m
		g16, m, err := cp.ReadI16(in[p:])
		if err != nil || g16 != i16 {
			t.Fatalf("i16 %d: %d %v", i16, g16, err)
		}
		p += m
		gd, m, err := cp.ReadDouble(in[p:])
		if err != nil || math.Float64bits(gd) != math.Float64bits(d) {
			t.Fatalf("double %v: %v %v", d, gd, err)
		}
		p += m
		gs, m, err := cp.ReadString(in[p:])
		if err != nil || gs != s {
			t.Fatalf("string: %q %v", gs, err)
		}
		p += m
		ft, gid, gb, hasBool, m, err := cp.ReadFieldBegin(in[p:], last)
		if err != nil || ft != thrift.BOOL || gid != id || gb != bv || !hasBool || p+m != n {
			t.Fatalf("bool field: %v %d %v %v %v", ft, gid, gb, hasBool, err)
		}
	})
}

// FuzzApplicationException decodes arbitrary bytes as a TApplicationException
// with both protocols; whatever decodes must re-encode and decode the same.
func FuzzApplicationException(f *testing.F) {
	e := thrift.NewApplicationException(thrift.ExceptionProtocolError, "bad request")
	f.Add(thrift.Marshal(e), false)
	f.Add(thrift.MarshalCompact(e), true)
	f.Fuzz(func(t *testing.T, in []byte, compact bool) {
		var got thrift.ApplicationException
		var err error
		used := measure(func() {
			if compact {
				_, err = got.FastReadCompact(in)
			} else {
				_, err = got.FastRead(in)
			}
		})
		if used > allocBudget(len(in)) {
			t.Fatalf("allocated %d bytes for %d input bytes", used, len(in))
		}
		if err != nil {
			if thrift.KindOf(err) == 0 {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		var again thrift.ApplicationException
		if compact {
			err = thrift.UnmarshalCompact(thrift.MarshalCompact(&got), &again)
		} else {
			err = thrift.Unmarshal(thrift.Marshal(&got), &again)
		}
		if err != nil || again != got {
			t.Fatalf("re-encode: %+v vs %+v, %v", again, got, err)
		}
	})
}
