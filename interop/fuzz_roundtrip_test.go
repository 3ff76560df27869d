package interop_test

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
	po "github.com/petrel-rpc/petrel/interop/gen-petrel/petrelonly"
)

// generated is what the generated-struct fuzz targets need of a generated struct,
// in both protocols.
type generated interface {
	thrift.FastCodec
	thrift.CompactCodec
}

// roundTripKinds are the generated structs the fuzz targets read
// into: Everything holds every Thrift type Apache knows, Identified the uuid.
var roundTripKinds = []struct {
	name string
	make func() generated
}{
	{"Everything", func() generated { return new(pe.Everything) }},
	{"Identified", func() generated { return new(po.Identified) }},
}

// fuzzAllocBound is the most a read of n arbitrary bytes may allocate: a
// fixed allowance plus a constant per input byte. Every element of a
// container takes at least one byte on the wire, so a reader that sizes its
// containers by the bytes left never needs more; one that trusts a declared
// size does.
func fuzzAllocBound(n int) uint64 { return 1<<20 + 1024*uint64(n) }

// FuzzGeneratedBinary feeds arbitrary bytes to generated structs' binary
// readers (see fuzzGenerated).
func FuzzGeneratedBinary(f *testing.F) { fuzzGenerated(f, false) }

// FuzzGeneratedCompact feeds arbitrary bytes to generated structs' compact
// readers (see fuzzGenerated).
func FuzzGeneratedCompact(f *testing.F) { fuzzGenerated(f, true) }

// fuzzGenerated reads arbitrary bytes into a generated struct (kind bit 0:
// Identified instead of Everything). A read must not panic, consume more
// than it was given or allocate beyond fuzzAllocBound. When it succeeds, the
// value written takes exactly BLength (BLengthCompact) bytes, and reading
// them back consumes all of them and gives an equal value (NaNs compared bit
// for bit).
func fuzzGenerated(f *testing.F, compact bool) {
	marshal := func(v generated) []byte {
		if compact {
			return thrift.MarshalCompact(v)
		}
		return thrift.Marshal(v)
	}
	f.Add(uint8(0), marshal(fullValue()))
	f.Add(uint8(0), marshal(sparseValue()))
	f.Add(uint8(1), marshal(uuidValue()))
	f.Fuzz(func(t *testing.T, kind uint8, in []byte) {
		k := roundTripKinds[kind&1]
		proto := "binary"
		read := func(v generated, b []byte) (int, error) { return v.FastRead(b) }
		length := func(v generated) int { return v.BLength() }
		write := func(v generated, b []byte) int { return v.FastWrite(b) }
		if compact {
			proto = "compact"
			read = func(v generated, b []byte) (int, error) { return v.FastReadCompact(b) }
			length = func(v generated) int { return v.BLengthCompact() }
			write = func(v generated, b []byte) int { return v.FastWriteCompact(b) }
		}

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v := k.make()
		n, err := read(v, in)
		runtime.ReadMemStats(&after)
		if got, limit := after.TotalAlloc-before.TotalAlloc, fuzzAllocBound(len(in)); got > limit {
			t.Fatalf("%s %s: reading %d bytes allocated %d bytes (limit %d), err %v", proto, k.name, len(in), got, limit, err)
		}
		if err != nil {
			return
		}
		if n < 0 || n > len(in) {
			t.Fatalf("%s %s: read of %d bytes reports %d consumed", proto, k.name, len(in), n)
		}

		size := length(v)
		out := make([]byte, size+64)
		if w := write(v, out); w != size {
			t.Fatalf("%s %s: wrote %d bytes, its length says %d", proto, k.name, w, size)
		}
		out = out[:size]
		again := k.make()
		m, err := read(again, out)
		if err != nil {
			t.Fatalf("%s %s: cannot read back its own %d bytes: %v\nvalue %v\nbytes %x", proto, k.name, size, err, v, out)
		}
		if m != size {
			t.Fatalf("%s %s: read back %d of its own %d bytes", proto, k.name, m, size)
		}
		fillUnsetStructs(reflect.ValueOf(v))
		if d := diff(v, again); d != "" {
			t.Fatalf("%s %s: read, written and read back differs: %s\ninput %x\nwritten %x", proto, k.name, d, in, out)
		}
	})
}

// fillUnsetStructs gives every nil struct field of v (a pointer to a
// generated struct) that is not optional an empty struct, recursively: the
// writers write such a field (a nil one as an empty struct), as Apache's do,
// so the value read back has an empty struct (with its defaults) where v
// had nil.
func fillUnsetStructs(v reflect.Value) {
	s := v.Elem()
	for i := range s.NumField() {
		f, sf := s.Field(i), s.Type().Field(i)
		if f.Kind() != reflect.Pointer || f.Type().Elem().Kind() != reflect.Struct {
			continue
		}
		if f.IsNil() {
			if strings.Contains(sf.Tag.Get("thrift"), ",optional") {
				continue
			}
			f.Set(reflect.New(f.Type().Elem()))
			if m := f.MethodByName("InitDefault"); m.IsValid() {
				m.Call(nil) // a struct read from no fields has its defaults
			}
		}
		fillUnsetStructs(f)
	}
}
