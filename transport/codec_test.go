package transport_test

import (
	"github.com/petrel-rpc/petrel/codec/thrift"
)

// echo is a hand-written Thrift struct: field 1 string text, field 2
// list<i32> nums. It implements FastCodec, NocopyCodec and CompactCodec.
type echo struct {
	Text string
	Nums []int32
}

func (e *echo) BLength() int {
	return thrift.FieldBeginLength + thrift.Binary.StringLength(e.Text) +
		thrift.FieldBeginLength + 5 + 4*len(e.Nums) + 1
}

func (e *echo) FastWrite(b []byte) int { return e.FastWriteNocopy(b, nil) }

func (e *echo) FastWriteNocopy(b []byte, w thrift.NocopyWriter) int {
	n := thrift.Binary.WriteFieldBegin(b, thrift.STRING, 1)
	n += thrift.Binary.WriteStringNocopy(b[n:], w, e.Text)
	n += thrift.Binary.WriteFieldBegin(b[n:], thrift.LIST, 2)
	n += thrift.Binary.WriteListBegin(b[n:], thrift.I32, len(e.Nums))
	n += thrift.Binary.WriteI32Slice(b[n:], e.Nums)
	return n + thrift.Binary.WriteFieldStop(b[n:])
}

func (e *echo) FastRead(b []byte) (int, error) {
	e.Text, e.Nums = "", e.Nums[:0]
	pos := 0
	for {
		t, id, n, err := thrift.Binary.ReadFieldBegin(b[pos:])
		if err != nil {
			return 0, err
		}
		pos += n
		if t == thrift.STOP {
			return pos, nil
		}
		switch {
		case id == 1 && t == thrift.STRING:
			s, n, err := thrift.Binary.ReadString(b[pos:])
			if err != nil {
				return 0, err
			}
			e.Text, pos = s, pos+n
		case id == 2 && t == thrift.LIST:
			_, size, n, err := thrift.Binary.ReadListBegin(b[pos:])
			if err != nil {
				return 0, err
			}
			pos += n
			if cap(e.Nums) < size {
				e.Nums = make([]int32, size)
			}
			e.Nums = e.Nums[:size]
			n, err = thrift.Binary.ReadI32Slice(b[pos:], e.Nums)
			if err != nil {
				return 0, err
			}
			pos += n
		default:
			n, err := thrift.Binary.Skip(b[pos:], t, 0)
			if err != nil {
				return 0, err
			}
			pos += n
		}
	}
}

func (e *echo) BLengthCompact() int {
	c := thrift.Compact
	n := c.FieldBeginLength(thrift.STRING, 1, 0) + c.StringLength(e.Text)
	n += c.FieldBeginLength(thrift.LIST, 2, 1) + c.ListBeginLength(len(e.Nums))
	for _, v := range e.Nums {
		n += c.I32Length(v)
	}
	return n + 1
}

func (e *echo) FastWriteCompact(b []byte) int {
	c := thrift.Compact
	n := c.WriteFieldBegin(b, thrift.STRING, 1, 0)
	n += c.WriteString(b[n:], e.Text)
	n += c.WriteFieldBegin(b[n:], thrift.LIST, 2, 1)
	n += c.WriteListBegin(b[n:], thrift.I32, len(e.Nums))
	for _, v := range e.Nums {
		n += c.WriteI32(b[n:], v)
	}
	return n + c.WriteFieldStop(b[n:])
}

func (e *echo) FastReadCompact(b []byte) (int, error) {
	c := thrift.Compact
	e.Text, e.Nums = "", e.Nums[:0]
	pos, last := 0, int16(0)
	for {
		t, id, _, _, n, err := c.ReadFieldBegin(b[pos:], last)
		if err != nil {
			return 0, err
		}
		pos += n
		if t == thrift.STOP {
			return pos, nil
		}
		last = id
		switch {
		case id == 1 && t == thrift.STRING:
			s, n, err := c.ReadString(b[pos:])
			if err != nil {
				return 0, err
			}
			e.Text, pos = s, pos+n
		case id == 2 && t == thrift.LIST:
			_, size, n, err := c.ReadListBegin(b[pos:])
			if err != nil {
				return 0, err
			}
			pos += n
			for range size {
				v, n, err := c.ReadI32(b[pos:])
				if err != nil {
					return 0, err
				}
				e.Nums = append(e.Nums, v)
				pos += n
			}
		default:
			n, err := c.Skip(b[pos:], t, 0)
			if err != nil {
				return 0, err
			}
			pos += n
		}
	}
}
