package transport_test

import (
	"strconv"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// blob is a struct with one binary field, read without copying, so that the
// benchmarks measure the transport and not the body's decoding.
type blob struct{ Data []byte }

func (b *blob) BLength() int { return thrift.FieldBeginLength + thrift.Binary.BinaryLength(b.Data) + 1 }

func (b *blob) FastWrite(p []byte) int {
	n := thrift.Binary.WriteFieldBegin(p, thrift.STRING, 1)
	n += thrift.Binary.WriteBinary(p[n:], b.Data)
	return n + thrift.Binary.WriteFieldStop(p[n:])
}

func (b *blob) FastRead(p []byte) (int, error) {
	t, _, n, err := thrift.Binary.ReadFieldBegin(p)
	if err != nil || t != thrift.STRING {
		return 0, err
	}
	v, m, err := thrift.Binary.ReadBinaryNocopy(p[n:])
	if err != nil {
		return 0, err
	}
	b.Data = v
	return n + m + 1, nil
}

// BenchmarkEcho1KB encodes and decodes a 1 KiB message through each protocol
// on one reused LinkBuffer (the write side then the read side, as a client's
// request and a server's read of it).
func BenchmarkEcho1KB(b *testing.B) {
	kitex := func() *transport.Header {
		h := &transport.Header{}
		h.SetInt(transport.KeyFromService, "bench.client")
		h.SetInt(transport.KeyToService, "bench.server")
		h.SetInt(transport.KeyToMethod, "Echo")
		h.SetInt(transport.KeyRPCTimeout, "1000")
		h.SetInt(transport.KeyMsgType, "1")
		h.SetStr(transport.StrKeyIDLService, "EchoService")
		return h
	}
	for _, tc := range []struct {
		name  string
		p     transport.Protocol
		h     func() *transport.Header
		logID bool // a value that changes with every request
	}{
		{"Framed", transport.Framed, func() *transport.Header { return nil }, false},
		{"Buffered", transport.Buffered, func() *transport.Header { return nil }, false},
		{"TTHeader", transport.TTHeader, func() *transport.Header { return &transport.Header{} }, false},
		{"TTHeaderKitexInfo", transport.TTHeader, kitex, false},
		{"TTHeaderKitexInfoLogID", transport.TTHeader, kitex, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lb := buf.NewLinkBuffer()
			defer lb.Reset()
			out := tc.h()
			req := &blob{Data: make([]byte, 1024)}
			var resp blob
			var in transport.Header
			var ids [16]string
			for i := range ids {
				ids[i] = "log-" + strconv.Itoa(i)
			}
			b.ReportAllocs()
			b.SetBytes(int64(req.BLength()))
			i := 0
			for b.Loop() {
				i++
				if tc.logID {
					out.IntInfo[transport.KeyLogID] = ids[i%len(ids)]
				}
				if err := transport.WriteMessage(lb, tc.p, out, "Echo", thrift.CALL, int32(i), req); err != nil {
					b.Fatal(err)
				}
				lb.Flush()
				_, _, _, body, err := transport.ReadMessage(lb, tc.p, 0, &in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := resp.FastRead(body); err != nil {
					b.Fatal(err)
				}
				lb.Release()
			}
		})
	}
}

// BenchmarkBufferedSplit frames a Buffered message with nested containers
// that arrives in 512-byte reads (the resumable walk).
func BenchmarkBufferedSplit(b *testing.B) {
	msg := nestedMessage(200)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		r := newBlockingReader(msg, 512)
		if _, err := transport.ReadFrame(r, transport.Buffered, 0, nil); err != nil {
			b.Fatal(err)
		}
		r.lb.Reset()
	}
}

// BenchmarkBufferedTrickle frames a 256 KiB Buffered message that arrives in
// 1 KiB reads, each followed by a Peek of the whole message so far.
func BenchmarkBufferedTrickle(b *testing.B) {
	msg := trickleMessage(256)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		r := newBlockingReader(msg, 1024)
		if _, err := transport.ReadFrame(r, transport.Buffered, 0, nil); err != nil {
			b.Fatal(err)
		}
		r.lb.Reset()
	}
}
