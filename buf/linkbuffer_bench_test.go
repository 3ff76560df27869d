package buf_test

import (
	"bytes"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
)

// BenchmarkMallocFlushNext is one message through a buffer: write, publish,
// read, release, as a connection's output and input buffers see it.
func BenchmarkMallocFlushNext(b *testing.B) {
	for _, size := range []int{64, 1024, 4096} {
		b.Run(sizeName(size), func(b *testing.B) {
			lb := buf.NewLinkBuffer()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				p, _ := lb.Malloc(size)
				p[0] = 1
				lb.Flush()
				lb.Next(size)
				lb.Release()
				lb.Reset()
			}
		})
	}
}

// BenchmarkWriteBinary compares a copied write with a linked one.
func BenchmarkWriteBinary(b *testing.B) {
	for _, size := range []int{1024, 64 << 10, 1 << 20} {
		data := bytes.Repeat([]byte{1}, size)
		b.Run(sizeName(size), func(b *testing.B) {
			lb := buf.NewLinkBuffer()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				lb.WriteString("hdr")
				lb.WriteBinary(data)
				lb.Flush()
				lb.Skip(lb.Len())
				lb.Release()
				lb.Reset()
			}
		})
	}
}

// BenchmarkNextSpanning reads messages that straddle node boundaries.
func BenchmarkNextSpanning(b *testing.B) {
	lb := buf.NewLinkBuffer()
	b.ReportAllocs()
	for b.Loop() {
		for range 8 {
			p, _ := lb.Malloc(1000)
			p[0] = 1
		}
		lb.Flush()
		for range 8 {
			lb.Next(1000)
		}
		lb.Release()
	}
}

func BenchmarkSlice(b *testing.B) {
	lb := buf.NewLinkBuffer()
	b.ReportAllocs()
	for b.Loop() {
		lb.Malloc(2048)
		lb.Flush()
		s, _ := lb.Slice(2048)
		lb.Release()
		s.Release()
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
