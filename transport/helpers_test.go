package transport_test

import (
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// errPastEnd is what blockingReader returns when asked for bytes its source
// will never deliver: a real connection would block there forever.
var errPastEnd = errors.New("test: read past the bytes the peer sent (a real connection would hang)")

// blockingReader is a buf.Reader that behaves like a netpoll connection's: a
// read of more bytes than are buffered waits for the next chunk from the
// peer. Chunks come from a list; when it is exhausted, a read that still
// lacks bytes fails with errPastEnd instead of hanging.
type blockingReader struct {
	lb     *buf.LinkBuffer
	chunks [][]byte
	waits  int // reads that had to wait for a chunk
}

// newBlockingReader splits b into chunks of size n.
func newBlockingReader(b []byte, n int) *blockingReader {
	r := &blockingReader{lb: buf.NewLinkBuffer()}
	for len(b) > 0 {
		k := min(n, len(b))
		r.chunks = append(r.chunks, b[:k])
		b = b[k:]
	}
	return r
}

func (r *blockingReader) fill(n int) error {
	for r.lb.Len() < n {
		if len(r.chunks) == 0 {
			return errPastEnd
		}
		r.waits++
		r.lb.Write(r.chunks[0])
		r.chunks = r.chunks[1:]
	}
	return nil
}

func (r *blockingReader) Next(n int) ([]byte, error) {
	if err := r.fill(n); err != nil {
		return nil, err
	}
	return r.lb.Next(n)
}

func (r *blockingReader) Peek(n int) ([]byte, error) {
	if err := r.fill(n); err != nil {
		return nil, err
	}
	return r.lb.Peek(n)
}

func (r *blockingReader) Skip(n int) error {
	if err := r.fill(n); err != nil {
		return err
	}
	return r.lb.Skip(n)
}

func (r *blockingReader) Until(delim byte) ([]byte, error) { return r.lb.Until(delim) }

func (r *blockingReader) ReadByte() (byte, error) {
	if err := r.fill(1); err != nil {
		return 0, err
	}
	return r.lb.ReadByte()
}

func (r *blockingReader) ReadString(n int) (string, error) {
	if err := r.fill(n); err != nil {
		return "", err
	}
	return r.lb.ReadString(n)
}

func (r *blockingReader) ReadBinary(n int) ([]byte, error) {
	if err := r.fill(n); err != nil {
		return nil, err
	}
	return r.lb.ReadBinary(n)
}

func (r *blockingReader) Slice(n int) (buf.Reader, error) {
	if err := r.fill(n); err != nil {
		return nil, err
	}
	return r.lb.Slice(n)
}

func (r *blockingReader) Release() error { return r.lb.Release() }
func (r *blockingReader) Len() int       { return r.lb.Len() }

// nestedMessage returns a strict binary CALL message "Nested" whose body is
// a struct with nested containers:
//
//	1: list<map<string, list<i64>>> (lists entries of maps of lists)
//	2: struct { 1: string; 2: set<binary>; 3: map<i32, struct{1: bool}> }
//	3: i32
//	4: uuid
func nestedMessage(listLen int) []byte {
	B := thrift.Binary
	b := make([]byte, 1<<20)
	n := B.WriteMessageBegin(b, "Nested", thrift.CALL, 42)
	n += B.WriteFieldBegin(b[n:], thrift.LIST, 1)
	n += B.WriteListBegin(b[n:], thrift.MAP, listLen)
	for i := range listLen {
		n += B.WriteMapBegin(b[n:], thrift.STRING, thrift.LIST, 2)
		for k := range 2 {
			n += B.WriteString(b[n:], string(rune('a'+k))+"-key")
			n += B.WriteListBegin(b[n:], thrift.I64, i%4)
			for j := range i % 4 {
				n += B.WriteI64(b[n:], int64(j))
			}
		}
	}
	n += B.WriteFieldBegin(b[n:], thrift.STRUCT, 2)
	n += B.WriteFieldBegin(b[n:], thrift.STRING, 1)
	n += B.WriteString(b[n:], "inner string")
	n += B.WriteFieldBegin(b[n:], thrift.SET, 2)
	n += B.WriteSetBegin(b[n:], thrift.STRING, 3)
	for k := range 3 {
		n += B.WriteBinary(b[n:], make([]byte, 100*k))
	}
	n += B.WriteFieldBegin(b[n:], thrift.MAP, 3)
	n += B.WriteMapBegin(b[n:], thrift.I32, thrift.STRUCT, 2)
	for k := range 2 {
		n += B.WriteI32(b[n:], int32(k))
		n += B.WriteFieldBegin(b[n:], thrift.BOOL, 1)
		n += B.WriteBool(b[n:], k == 1)
		n += B.WriteFieldStop(b[n:])
	}
	n += B.WriteFieldStop(b[n:])
	n += B.WriteFieldBegin(b[n:], thrift.I32, 3)
	n += B.WriteI32(b[n:], 7)
	n += B.WriteFieldBegin(b[n:], thrift.UUID, 4)
	n += B.WriteUUID(b[n:], thrift.Tuuid{1, 2, 3})
	n += B.WriteFieldStop(b[n:])
	return b[:n]
}

// newScratch returns an empty LinkBuffer to encode into.
func newScratch() *buf.LinkBuffer { return buf.NewLinkBuffer() }
