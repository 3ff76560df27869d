package interop_test

import (
	"bytes"
	"context"
	"testing"

	athrift "github.com/apache/thrift/lib/go/thrift"

	"github.com/petrel-rpc/petrel/codec/thrift"
	po "github.com/petrel-rpc/petrel/interop/gen-petrel/petrelonly"
)

// Apache Thrift 0.17.0 (compiler and Go library) has no uuid, so Petrel's
// uuid encoding is checked against the protocol specifications: in both, a
// uuid is its 16 bytes in order (RFC 4122 network order); its type id is 16
// in the binary protocol and 13 in the compact protocol.

var (
	uuidA = thrift.Tuuid{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	uuidB = thrift.Tuuid{0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00}
)

func uuidValue() *po.Identified {
	return &po.Identified{
		ID:      uuidA,
		Related: []thrift.Tuuid{uuidB},
		Labels:  map[thrift.Tuuid]string{uuidA: "x"},
		Fixed:   uuidB,
	}
}

// TestUUIDBinaryLayout builds the expected bytes with Apache's
// TBinaryProtocol for everything but the uuids themselves, which go in raw.
func TestUUIDBinaryLayout(t *testing.T) {
	const uuidType = athrift.TType(16)
	ctx := context.Background()
	buf := athrift.NewTMemoryBuffer()
	w := athrift.NewTBinaryProtocolConf(buf, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.WriteFieldBegin(ctx, "id", uuidType, 1))
	buf.Write(uuidA[:])
	must(w.WriteFieldBegin(ctx, "related", athrift.LIST, 3))
	must(w.WriteListBegin(ctx, uuidType, 1))
	buf.Write(uuidB[:])
	must(w.WriteFieldBegin(ctx, "labels", athrift.MAP, 4))
	must(w.WriteMapBegin(ctx, uuidType, athrift.STRING, 1))
	buf.Write(uuidA[:])
	must(w.WriteString(ctx, "x"))
	must(w.WriteFieldBegin(ctx, "fixed", uuidType, 5))
	buf.Write(uuidB[:])
	must(w.WriteFieldStop(ctx))
	must(w.Flush(ctx))
	want := buf.Bytes()

	got := thrift.Marshal(uuidValue())
	if !bytes.Equal(got, want) {
		t.Fatalf("binary uuid bytes\n got %x\nwant %x", got, want)
	}
	checkUUIDRead(t, "binary", got, (*po.Identified).FastRead)
}

// TestUUIDCompactLayout spells the expected bytes out from the compact
// protocol's specification (Apache's compact protocol 0.17.0 cannot write a
// uuid type id).
func TestUUIDCompactLayout(t *testing.T) {
	var want []byte
	want = append(want, 0x1d) // field 1 (delta 1), type 13 uuid
	want = append(want, uuidA[:]...)
	want = append(want, 0x29, 0x1d) // field 3 (delta 2), list; 1 element of type 13
	want = append(want, uuidB[:]...)
	want = append(want, 0x1b, 0x01, 0xd8) // field 4 (delta 1), map; 1 entry; key 13, value 8 (binary)
	want = append(want, uuidA[:]...)
	want = append(want, 0x01, 'x')
	want = append(want, 0x1d) // field 5 (delta 1), uuid
	want = append(want, uuidB[:]...)
	want = append(want, 0x00) // stop

	got := thrift.MarshalCompact(uuidValue())
	if !bytes.Equal(got, want) {
		t.Fatalf("compact uuid bytes\n got %x\nwant %x", got, want)
	}
	checkUUIDRead(t, "compact", got, (*po.Identified).FastReadCompact)
}

func checkUUIDRead(t *testing.T, name string, b []byte, read func(*po.Identified, []byte) (int, error)) {
	t.Helper()
	got := new(po.Identified)
	n, err := read(got, b)
	if err != nil || n != len(b) {
		t.Fatalf("%s read: n=%d of %d, err %v", name, n, len(b), err)
	}
	if d := diff(got, uuidValue()); d != "" {
		t.Fatalf("%s read: %s", name, d)
	}
}
