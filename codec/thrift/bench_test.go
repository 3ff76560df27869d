package thrift_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// Sinks keep the compiler from discarding benchmarked work.
var (
	sinkInt    int
	sinkI64    int64
	sinkString string
	sinkBytes  []byte
)

func BenchmarkBinaryWriteI64(b *testing.B) {
	buf := make([]byte, 8)
	b.ReportAllocs()
	for i := range b.N {
		sinkInt = bp.WriteI64(buf, int64(i))
	}
}

func BenchmarkBinaryReadI64(b *testing.B) {
	buf := make([]byte, 8)
	bp.WriteI64(buf, -12345)
	b.ReportAllocs()
	for range b.N {
		v, n, err := bp.ReadI64(buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkI64, sinkInt = v, n
	}
}

func BenchmarkBinaryWriteFieldBegin(b *testing.B) {
	buf := make([]byte, 3)
	b.ReportAllocs()
	for i := range b.N {
		sinkInt = bp.WriteFieldBegin(buf, thrift.I32, int16(i))
	}
}

func BenchmarkBinaryReadFieldBegin(b *testing.B) {
	buf := make([]byte, 3)
	bp.WriteFieldBegin(buf, thrift.I32, 7)
	b.ReportAllocs()
	for range b.N {
		_, id, n, err := bp.ReadFieldBegin(buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt = n + int(id)
	}
}

var benchString = strings.Repeat("p", 64)

func BenchmarkBinaryWriteString64(b *testing.B) {
	buf := make([]byte, 4+len(benchString))
	b.SetBytes(int64(len(benchString)))
	b.ReportAllocs()
	for range b.N {
		sinkInt = bp.WriteString(buf, benchString)
	}
}

func BenchmarkBinaryReadString64(b *testing.B) {
	buf := make([]byte, 4+len(benchString))
	bp.WriteString(buf, benchString)
	b.SetBytes(int64(len(benchString)))
	b.ReportAllocs()
	for range b.N {
		s, _, err := bp.ReadString(buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkString = s
	}
}

func BenchmarkBinaryReadStringNocopy64(b *testing.B) {
	buf := make([]byte, 4+len(benchString))
	bp.WriteString(buf, benchString)
	b.SetBytes(int64(len(benchString)))
	b.ReportAllocs()
	for range b.N {
		s, _, err := bp.ReadStringNocopy(buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkString = s
	}
}

func benchI64s() []int64 {
	v := make([]int64, 1024)
	for i := range v {
		v[i] = int64(i*i*7919) - 1<<20
	}
	return v
}

func BenchmarkBinaryWriteI64Slice(b *testing.B) {
	v := benchI64s()
	buf := make([]byte, 8*len(v))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		sinkInt = bp.WriteI64Slice(buf, v)
	}
}

// BenchmarkBinaryWriteI64Loop is the element-by-element loop the bulk writer
// replaces, for comparison.
func BenchmarkBinaryWriteI64Loop(b *testing.B) {
	v := benchI64s()
	buf := make([]byte, 8*len(v))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		n := 0
		for _, x := range v {
			n += bp.WriteI64(buf[n:], x)
		}
		sinkInt = n
	}
}

func BenchmarkBinaryReadI64Slice(b *testing.B) {
	v := benchI64s()
	buf := make([]byte, 8*len(v))
	bp.WriteI64Slice(buf, v)
	dst := make([]int64, len(v))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		n, err := bp.ReadI64Slice(buf, dst)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt = n
	}
}

func BenchmarkBinaryWriteI32Slice(b *testing.B) {
	v := make([]int32, 1024)
	for i := range v {
		v[i] = int32(i * 31)
	}
	buf := make([]byte, 4*len(v))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		sinkInt = bp.WriteI32Slice(buf, v)
	}
}

func BenchmarkBinaryWriteDoubleSlice(b *testing.B) {
	v := make([]float64, 1024)
	for i := range v {
		v[i] = float64(i) / 3
	}
	buf := make([]byte, 8*len(v))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		sinkInt = bp.WriteDoubleSlice(buf, v)
	}
}

func BenchmarkBinaryReadListBegin(b *testing.B) {
	buf := make([]byte, 5+8*16)
	bp.WriteListBegin(buf, thrift.I64, 16)
	b.ReportAllocs()
	for range b.N {
		_, size, _, err := bp.ReadListBegin(buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt = size
	}
}

func BenchmarkBinarySkipStruct(b *testing.B) {
	in := everything(newEnc(binaryProto)).bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for range b.N {
		n, err := bp.Skip(in, thrift.STRUCT, 0)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt = n
	}
}

func BenchmarkBinaryMarshalException(b *testing.B) {
	e := thrift.NewApplicationException(thrift.ExceptionInternalError, "handler failed")
	b.ReportAllocs()
	for range b.N {
		sinkBytes = thrift.Marshal(e)
	}
}

func BenchmarkCompactWriteI64(b *testing.B) {
	buf := make([]byte, 10)
	b.ReportAllocs()
	for i := range b.N {
		sinkInt = cp.WriteI64(buf, int64(i)<<20)
	}
}

func BenchmarkCompactReadI64(b *testing.B) {
	buf := make([]byte, 10)
	n := cp.WriteI64(buf, -123456789)
	buf = buf[:n]
	b.ReportAllocs()
	for range b.N {
		v, n, err := cp.ReadI64(buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkI64, sinkInt = v, n
	}
}

func BenchmarkCompactReadI32Small(b *testing.B) {
	buf := []byte{0x54}
	b.ReportAllocs()
	for range b.N {
		v, n, err := cp.ReadI32(buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt = int(v) + n
	}
}

func BenchmarkCompactWriteFieldBegin(b *testing.B) {
	buf := make([]byte, 4)
	b.ReportAllocs()
	for i := range b.N {
		sinkInt = cp.WriteFieldBegin(buf, thrift.I32, int16(i&7)+1, int16(i&7))
	}
}

func BenchmarkCompactReadFieldBegin(b *testing.B) {
	buf := []byte{0x15}
	b.ReportAllocs()
	for range b.N {
		_, id, _, _, n, err := cp.ReadFieldBegin(buf, 0)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt = n + int(id)
	}
}

func BenchmarkCompactWriteI64Slice(b *testing.B) {
	v := benchI64s()
	buf := make([]byte, cp.I64SliceLength(v))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		sinkInt = cp.WriteI64Slice(buf, v)
	}
}

func BenchmarkCompactReadI64Slice(b *testing.B) {
	v := benchI64s()
	buf := make([]byte, cp.I64SliceLength(v))
	cp.WriteI64Slice(buf, v)
	dst := make([]int64, len(v))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		n, err := cp.ReadI64Slice(buf, dst)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt = n
	}
}

func BenchmarkCompactReadString64(b *testing.B) {
	buf := make([]byte, cp.StringLength(benchString))
	cp.WriteString(buf, benchString)
	b.SetBytes(int64(len(benchString)))
	b.ReportAllocs()
	for range b.N {
		s, _, err := cp.ReadString(buf)
		if err != nil {
			b.Fatal(err)
		}
		sinkString = s
	}
}

func BenchmarkCompactSkipStruct(b *testing.B) {
	in := everything(newEnc(compactProto)).bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for range b.N {
		n, err := cp.Skip(in, thrift.STRUCT, 0)
		if err != nil {
			b.Fatal(err)
		}
		sinkInt = n
	}
}
