package thrift_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// proto adapts one protocol's writers and Skip for tests shared by both.
type proto struct {
	name       string
	fieldBegin func(b []byte, t TType, id, last int16) int
	fieldBool  func(b []byte, id, last int16, v bool) int
	stop       func(b []byte) int
	list       func(b []byte, elem TType, n int) int
	set        func(b []byte, elem TType, n int) int
	mapBegin   func(b []byte, k, v TType, n int) int
	boolean    func(b []byte, v bool) int
	i8         func(b []byte, v int8) int
	i16        func(b []byte, v int16) int
	i32        func(b []byte, v int32) int
	i64        func(b []byte, v int64) int
	double     func(b []byte, v float64) int
	str        func(b []byte, v string) int
	uuid       func(b []byte, v thrift.Tuuid) int
	skip       func(b []byte, t TType, maxDepth int) (int, error)
}

// protos lists the protocols the shared tests run over.
var protos = []proto{binaryProto}

var binaryProto = proto{
	name: "binary",
	fieldBegin: func(b []byte, t TType, id, _ int16) int {
		return bp.WriteFieldBegin(b, t, id)
	},
	fieldBool: func(b []byte, id, _ int16, v bool) int {
		n := bp.WriteFieldBegin(b, thrift.BOOL, id)
		return n + bp.WriteBool(b[n:], v)
	},
	stop: bp.WriteFieldStop, list: bp.WriteListBegin, set: bp.WriteSetBegin, mapBegin: bp.WriteMapBegin,
	boolean: bp.WriteBool, i8: bp.WriteI8, i16: bp.WriteI16, i32: bp.WriteI32, i64: bp.WriteI64,
	double: bp.WriteDouble, str: bp.WriteString, uuid: bp.WriteUUID, skip: bp.Skip,
}

// enc builds an encoding in a scratch buffer through a proto.
type enc struct {
	p    proto
	b    []byte
	n    int
	last []int16 // field id stack for compact deltas
}

func newEnc(p proto) *enc { return &enc{p: p, b: make([]byte, 1<<16), last: []int16{0}} }

func (e *enc) put(n int) *enc    { e.n += n; return e }
func (e *enc) w() []byte         { return e.b[e.n:] }
func (e *enc) bytes() []byte     { return append([]byte(nil), e.b[:e.n]...) }
func (e *enc) beginStruct() *enc { e.last = append(e.last, 0); return e }
func (e *enc) endStruct() *enc   { e.last = e.last[:len(e.last)-1]; return e.put(e.p.stop(e.w())) }
func (e *enc) field(t TType, id int16) *enc {
	top := len(e.last) - 1
	e.put(e.p.fieldBegin(e.w(), t, id, e.last[top]))
	e.last[top] = id
	return e
}
func (e *enc) boolField(id int16, v bool) *enc {
	top := len(e.last) - 1
	e.put(e.p.fieldBool(e.w(), id, e.last[top], v))
	e.last[top] = id
	return e
}

// everything writes a struct with a field of every type, containers of
// scalars and of composites, and a nested struct.
func everything(e *enc) *enc {
	e.beginStruct()
	e.boolField(1, true).boolField(2, false)
	e.field(thrift.BYTE, 3).put(e.p.i8(e.w(), -7))
	e.field(thrift.I16, 4).put(e.p.i16(e.w(), -300))
	e.field(thrift.I32, 5).put(e.p.i32(e.w(), 1<<30))
	e.field(thrift.I64, 6).put(e.p.i64(e.w(), -1<<40))
	e.field(thrift.DOUBLE, 7).put(e.p.double(e.w(), 2.5))
	e.field(thrift.STRING, 8).put(e.p.str(e.w(), "hello"))
	e.field(thrift.UUID, 9).put(e.p.uuid(e.w(), thrift.Tuuid{1, 2, 3}))
	e.field(thrift.STRUCT, 40) // long delta on compact
	e.beginStruct().field(thrift.I32, 1).put(e.p.i32(e.w(), 5)).endStruct()
	e.field(thrift.LIST, 41).put(e.p.list(e.w(), thrift.I64, 3))
	for _, v := range []int64{1, -1, 1 << 50} {
		e.put(e.p.i64(e.w(), v))
	}
	e.field(thrift.LIST, 42).put(e.p.list(e.w(), thrift.BOOL, 2)).put(e.p.boolean(e.w(), true)).put(e.p.boolean(e.w(), false))
	e.field(thrift.SET, 43).put(e.p.set(e.w(), thrift.STRUCT, 2))
	e.beginStruct().field(thrift.STRING, 1).put(e.p.str(e.w(), "a")).endStruct()
	e.beginStruct().endStruct()
	e.field(thrift.MAP, 44).put(e.p.mapBegin(e.w(), thrift.STRING, thrift.LIST, 2))
	e.put(e.p.str(e.w(), "k1")).put(e.p.list(e.w(), thrift.I32, 1)).put(e.p.i32(e.w(), 9))
	e.put(e.p.str(e.w(), "k2")).put(e.p.list(e.w(), thrift.I32, 0))
	e.field(thrift.MAP, 45).put(e.p.mapBegin(e.w(), thrift.I32, thrift.DOUBLE, 2))
	e.put(e.p.i32(e.w(), 1)).put(e.p.double(e.w(), 1)).put(e.p.i32(e.w(), 2)).put(e.p.double(e.w(), 2))
	e.field(thrift.MAP, 46).put(e.p.mapBegin(e.w(), thrift.I32, thrift.I32, 0))
	e.field(thrift.LIST, 47).put(e.p.list(e.w(), thrift.STRING, 20))
	for range 20 {
		e.put(e.p.str(e.w(), "x"))
	}
	e.field(thrift.UUID, -3).put(e.p.uuid(e.w(), thrift.Tuuid{}))
	return e.endStruct()
}

func TestSkipEveryType(t *testing.T) {
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			in := everything(newEnc(p)).bytes()
			trailing := append(append([]byte(nil), in...), 0xAA, 0xBB)
			n, err := p.skip(trailing, thrift.STRUCT, 0)
			if err != nil || n != len(in) {
				t.Fatalf("Skip = %d, %v; want %d", n, err, len(in))
			}
			// Every proper prefix fails with a typed error, never a panic.
			for i := range in {
				_, err := p.skip(in[:i], thrift.STRUCT, 0)
				var pe *thrift.ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("prefix %d: %v", i, err)
				}
			}
		})
	}
}

func TestSkipScalars(t *testing.T) {
	for _, p := range protos {
		b := make([]byte, 64)
		cases := []struct {
			t TType
			n int
		}{
			{thrift.BOOL, p.boolean(b, true)},
			{thrift.BYTE, p.i8(b, 1)},
			{thrift.I16, p.i16(b, -1000)},
			{thrift.I32, p.i32(b, -100000)},
			{thrift.I64, p.i64(b, -1<<62)},
			{thrift.DOUBLE, p.double(b, 1)},
			{thrift.STRING, p.str(b, "abc")},
			{thrift.UUID, p.uuid(b, thrift.Tuuid{9})},
		}
		// Each case wrote at b[0:]; re-write before skipping.
		writers := []func() int{
			func() int { return p.boolean(b, true) },
			func() int { return p.i8(b, 1) },
			func() int { return p.i16(b, -1000) },
			func() int { return p.i32(b, -100000) },
			func() int { return p.i64(b, -1<<62) },
			func() int { return p.double(b, 1) },
			func() int { return p.str(b, "abc") },
			func() int { return p.uuid(b, thrift.Tuuid{9}) },
		}
		for i, c := range cases {
			n := writers[i]()
			got, err := p.skip(b[:n], c.t, 0)
			if err != nil || got != n {
				t.Fatalf("%s: skip %v = %d, %v; want %d", p.name, c.t, got, err, n)
			}
			if n > 0 {
				_, err = p.skip(b[:n-1], c.t, 0)
				wantKind(t, err, thrift.UnexpectedEOF)
			}
		}
		for _, bad := range []TType{thrift.STOP, thrift.VOID, 5, 7, 9, 17, 200} {
			_, err := p.skip(b, bad, 0)
			wantKind(t, err, thrift.InvalidData)
		}
	}
}

// nested writes depth levels of the given container kind around an i32.
func nested(p proto, kind TType, depth int) []byte {
	e := newEnc(p)
	var open func(d int)
	open = func(d int) {
		if d == 0 {
			e.put(p.i32(e.w(), 7))
			return
		}
		inner := kind
		if d == 1 {
			inner = thrift.I32
		}
		switch kind {
		case thrift.STRUCT:
			e.beginStruct()
			if d == 1 {
				e.field(thrift.I32, 1).put(p.i32(e.w(), 7))
			} else {
				e.field(thrift.STRUCT, 1)
				open(d - 1)
			}
			e.endStruct()
			return
		case thrift.LIST:
			e.put(p.list(e.w(), inner, 1))
		case thrift.SET:
			e.put(p.set(e.w(), inner, 1))
		case thrift.MAP:
			e.put(p.mapBegin(e.w(), thrift.I32, inner, 1)).put(p.i32(e.w(), 1))
		}
		open(d - 1)
	}
	open(depth)
	return e.bytes()
}

func TestSkipDepth(t *testing.T) {
	for _, p := range protos {
		for _, kind := range []TType{thrift.STRUCT, thrift.LIST, thrift.SET, thrift.MAP} {
			for _, depth := range []int{1, 2, 10, 64} {
				in := nested(p, kind, depth)
				n, err := p.skip(in, kind, depth)
				if err != nil || n != len(in) {
					t.Fatalf("%s %v depth %d with max %d: %d %v", p.name, kind, depth, depth, n, err)
				}
				if depth > 1 {
					_, err = p.skip(in, kind, depth-1)
					wantKind(t, err, thrift.DepthLimit)
					if !strings.Contains(err.Error(), "deeper than") {
						t.Fatalf("message: %v", err)
					}
				}
			}
			// The default limit is 64.
			if _, err := p.skip(nested(p, kind, 64), kind, 0); err != nil {
				t.Fatalf("%s %v depth 64 with default: %v", p.name, kind, err)
			}
			_, err := p.skip(nested(p, kind, 65), kind, 0)
			wantKind(t, err, thrift.DepthLimit)
			if !strings.Contains(err.Error(), "deeper than 64 levels") {
				t.Fatalf("message: %v", err)
			}
		}
	}
}
