package thriftbench_test

import (
	"context"
	"sync"
	"testing"

	athrift "github.com/apache/thrift/lib/go/thrift"

	ap "github.com/petrel-rpc/petrel/bench/thrift/gen-apache/payload"
	pp "github.com/petrel-rpc/petrel/bench/thrift/gen-petrel/payload"
	"github.com/petrel-rpc/petrel/codec/thrift"
)

// payloadCase is one payload, as each generator's types hold it.
type payloadCase struct {
	name      string
	petrel    thrift.FastCodec        // the value Petrel marshals
	apache    athrift.TStruct         // the same value, read by Apache from data
	data      []byte                  // petrel's encoding; both unmarshal it
	newPetrel func() thrift.FastCodec // a fresh struct to unmarshal into
	newApache func() athrift.TStruct
}

// payloads are built once per test binary (the large one takes a while).
var payloads = sync.OnceValues(func() ([]*payloadCase, error) {
	cases := []*payloadCase{
		{
			name:      "small",
			petrel:    smallPayload(),
			newPetrel: func() thrift.FastCodec { return new(pp.Small) },
			newApache: func() athrift.TStruct { return ap.NewSmall() },
		},
		{
			name:      "large",
			petrel:    largePayload(),
			newPetrel: func() thrift.FastCodec { return new(pp.Large) },
			newApache: func() athrift.TStruct { return ap.NewLarge() },
		},
		{
			name:      "maps",
			petrel:    mapsPayload(),
			newPetrel: func() thrift.FastCodec { return new(pp.Maps) },
			newApache: func() athrift.TStruct { return ap.NewMaps() },
		},
	}
	for _, c := range cases {
		c.data = thrift.Marshal(c.petrel)
		c.apache = c.newApache()
		if err := apacheRead(c.data, c.apache); err != nil {
			return nil, err
		}
	}
	return cases, nil
})

func loadPayloads(tb testing.TB) []*payloadCase {
	tb.Helper()
	cases, err := payloads()
	if err != nil {
		tb.Fatalf("building payloads: %v", err)
	}
	return cases
}

// apacheRead decodes b into v with Apache's binary protocol, as the benchmark does.
func apacheRead(b []byte, v athrift.TStruct) error {
	buf := athrift.NewTMemoryBufferLen(len(b))
	buf.Write(b)
	return v.Read(context.Background(), athrift.NewTBinaryProtocolConf(buf, nil))
}

// apacheWrite encodes v with Apache's binary protocol.
func apacheWrite(v athrift.TStruct) ([]byte, error) {
	buf := athrift.NewTMemoryBuffer()
	if err := v.Write(context.Background(), athrift.NewTBinaryProtocolConf(buf, nil)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Sinks keep results alive so that the compiler cannot drop the work.
var (
	sinkBytes  []byte
	sinkPetrel thrift.FastCodec
	sinkApache athrift.TStruct
)

// BenchmarkMarshal:
//   - petrel: thrift.Marshal, a fresh output slice of exactly BLength bytes
//     every call (one allocation);
//   - petrel-reuse: BLength, then FastWrite into one buffer kept across
//     iterations (grown when short), as the transport writes into pooled
//     LinkBuffer memory;
//   - apache: one TMemoryBuffer and one TBinaryProtocol reused across
//     iterations (Reset), as a careful Apache user would.
func BenchmarkMarshal(b *testing.B) {
	cases := loadPayloads(b)
	b.Run("petrel", func(b *testing.B) {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.data)))
				for b.Loop() {
					sinkBytes = thrift.Marshal(c.petrel)
				}
			})
		}
	})
	b.Run("petrel-reuse", func(b *testing.B) {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				var buf []byte
				b.ReportAllocs()
				b.SetBytes(int64(len(c.data)))
				for b.Loop() {
					n := c.petrel.BLength()
					if cap(buf) < n {
						buf = make([]byte, n)
					}
					sinkBytes = buf[:c.petrel.FastWrite(buf[:n])]
				}
			})
		}
	})
	b.Run("apache", func(b *testing.B) {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				ctx := context.Background()
				buf := athrift.NewTMemoryBufferLen(len(c.data))
				proto := athrift.NewTBinaryProtocolConf(buf, nil)
				b.ReportAllocs()
				b.SetBytes(int64(len(c.data)))
				for b.Loop() {
					buf.Reset()
					if err := c.apache.Write(ctx, proto); err != nil {
						b.Fatal(err)
					}
					sinkBytes = buf.Bytes()
				}
			})
		}
	})
}

// BenchmarkUnmarshal: all read the same bytes into a fresh struct each
// iteration.
//   - petrel: thrift.Unmarshal, which is given the message and nothing else
//     and takes one private copy of all of it for the strings (no scan);
//   - petrel-fastread: FastRead, which does not know where the struct ends
//     and on inputs over 4 KiB first scans for it (a Skip pass), so that
//     its private copy holds the struct only;
//   - apache: reads from one TMemoryBuffer reused across iterations (Reset,
//     then the bytes are copied in: a memmove, no allocation).
func BenchmarkUnmarshal(b *testing.B) {
	cases := loadPayloads(b)
	b.Run("petrel", func(b *testing.B) {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.data)))
				for b.Loop() {
					v := c.newPetrel()
					if err := thrift.Unmarshal(c.data, v); err != nil {
						b.Fatal(err)
					}
					sinkPetrel = v
				}
			})
		}
	})
	b.Run("petrel-fastread", func(b *testing.B) {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.data)))
				for b.Loop() {
					v := c.newPetrel()
					if _, err := v.FastRead(c.data); err != nil {
						b.Fatal(err)
					}
					sinkPetrel = v
				}
			})
		}
	})
	b.Run("apache", func(b *testing.B) {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				ctx := context.Background()
				buf := athrift.NewTMemoryBufferLen(len(c.data))
				proto := athrift.NewTBinaryProtocolConf(buf, nil)
				b.ReportAllocs()
				b.SetBytes(int64(len(c.data)))
				for b.Loop() {
					buf.Reset()
					buf.Write(c.data)
					v := c.newApache()
					if err := v.Read(ctx, proto); err != nil {
						b.Fatal(err)
					}
					sinkApache = v
				}
			})
		}
	})
}
