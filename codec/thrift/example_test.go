package thrift_test

import (
	"errors"
	"fmt"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// This is what generated code does for a struct {1: string name, 2: list<i64> ids}:
// size it, write it with the binary protocol, read it back.
func Example() {
	name, ids := "petrel", []int64{3, 1, 4}

	size := thrift.FieldBeginLength + thrift.Binary.StringLength(name) +
		thrift.FieldBeginLength + thrift.ListBeginLength + len(ids)*thrift.I64Length + thrift.FieldStopLength
	b := make([]byte, size)
	n := thrift.Binary.WriteFieldBegin(b, thrift.STRING, 1)
	n += thrift.Binary.WriteString(b[n:], name)
	n += thrift.Binary.WriteFieldBegin(b[n:], thrift.LIST, 2)
	n += thrift.Binary.WriteListBegin(b[n:], thrift.I64, len(ids))
	n += thrift.Binary.WriteI64Slice(b[n:], ids)
	n += thrift.Binary.WriteFieldStop(b[n:])
	fmt.Printf("%d bytes: % x\n", n, b[:7])

	// Read: fields in any order, unknown ones skipped.
	p := 0
	for {
		t, id, m, err := thrift.Binary.ReadFieldBegin(b[p:])
		if err != nil {
			fmt.Println(err)
			return
		}
		p += m
		if t == thrift.STOP {
			break
		}
		switch {
		case id == 1 && t == thrift.STRING:
			s, m, _ := thrift.Binary.ReadString(b[p:])
			fmt.Println("name:", s)
			p += m
		case id == 2 && t == thrift.LIST:
			_, size, m, _ := thrift.Binary.ReadListBegin(b[p:])
			got := make([]int64, size)
			m2, _ := thrift.Binary.ReadI64Slice(b[p+m:], got)
			fmt.Println("ids:", got)
			p += m + m2
		default:
			m, _ := thrift.Binary.Skip(b[p:], t, 0)
			p += m
		}
	}

	// A hostile header is refused before anything is allocated.
	_, _, _, err := thrift.Binary.ReadListBegin([]byte{byte(thrift.I64), 0x00, 0x10, 0x00, 0x00, 1, 2})
	fmt.Println(err, errors.Is(err, thrift.ErrUnexpectedEOF))
	// Output:
	// 46 bytes: 0b 00 01 00 00 00 06
	// name: petrel
	// ids: [3 1 4]
	// thrift: list of 1048576 elements declared but only 2 bytes left true
}

// Compact field headers carry the id as a delta from the previous field and
// fold bool values into the header.
func ExampleCompactProtocol_WriteFieldBool() {
	b := make([]byte, 8)
	n := thrift.Compact.WriteFieldBool(b, 1, 0, true)       // delta 1, type TRUE
	n += thrift.Compact.WriteFieldBool(b[n:], 40, 1, false) // delta 39: long form
	fmt.Printf("% x\n", b[:n])
	// Output: 11 02 50
}
