package thrift

import (
	"encoding/binary"
	"math"
)

// Generated readers that keep unknown fields keep them in both protocols,
// so that a struct read in one protocol and written in the other (a proxy
// between a binary and a compact peer) still writes them. These functions
// re-encode one kept field; its value has passed Skip already, but they
// check it again and fail rather than misread it.

// AppendUnknownFromBinary appends to dst what [CompactProtocol.AppendUnknownField]
// would for the field of type t and id whose binary-encoded value is value
// (for a bool field, its one byte).
func (CompactProtocol) AppendUnknownFromBinary(dst []byte, t TType, id int16, value []byte) ([]byte, error) {
	if t == BOOL {
		if len(value) != 1 {
			return dst, errShort("bool", 1, len(value))
		}
		return Compact.AppendUnknownField(dst, BOOL, id, value[0] != 0, nil), nil
	}
	dst = Compact.AppendUnknownField(dst, t, id, false, nil)
	d := int(maxDepth.Load())
	dst, n, err := binaryToCompact(dst, value, t, d)
	if err != nil {
		return dst, skipError(err, n, d)
	}
	if n != len(value) {
		return dst, newError(InvalidData, "unknown field %d: %d bytes after its %s value", id, len(value)-n, t)
	}
	return dst, nil
}

// AppendUnknownFromCompact appends to dst the binary encoding of the field
// (header and value) of type t and id whose compact-encoded value is value
// (empty for a bool field, whose value boolVal is).
func (BinaryProtocol) AppendUnknownFromCompact(dst []byte, t TType, id int16, boolVal bool, value []byte) ([]byte, error) {
	var hdr [3]byte
	dst = append(dst, hdr[:Binary.WriteFieldBegin(hdr[:], t, id)]...)
	if t == BOOL && len(value) == 0 {
		return append(dst, hdr[:Binary.WriteBool(hdr[:], boolVal)]...), nil
	}
	d := int(maxDepth.Load())
	dst, n, err := compactToBinary(dst, value, t, d)
	if err != nil {
		return dst, skipError(err, n, d)
	}
	if n != len(value) {
		return dst, newError(InvalidData, "unknown field %d: %d bytes after its %s value", id, len(value)-n, t)
	}
	return dst, nil
}

// binaryToCompact appends the compact encoding of the binary value of type
// t at the start of b, and returns the bytes of b it took.
func binaryToCompact(dst, b []byte, t TType, depth int) ([]byte, int, error) {
	var s [16]byte
	if depth <= 0 && (t == STRUCT || t == LIST || t == SET || t == MAP) {
		return dst, 0, errDepth()
	}
	switch t {
	case BOOL:
		v, n, err := Binary.ReadBool(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Compact.WriteBool(s[:], v)]...), n, nil
	case BYTE:
		v, n, err := Binary.ReadI8(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, byte(v)), n, nil
	case I16:
		v, n, err := Binary.ReadI16(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Compact.WriteI16(s[:], v)]...), n, nil
	case I32:
		v, n, err := Binary.ReadI32(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Compact.WriteI32(s[:], v)]...), n, nil
	case I64:
		v, n, err := Binary.ReadI64(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Compact.WriteI64(s[:], v)]...), n, nil
	case DOUBLE:
		v, n, err := Binary.ReadDouble(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Compact.WriteDouble(s[:], v)]...), n, nil
	case UUID:
		v, n, err := Binary.ReadUUID(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, v[:]...), n, nil
	case STRING:
		l, err := binaryLen(b, "string")
		if err != nil {
			return dst, 0, err
		}
		dst = append(dst, s[:putUvarint(s[:], uint64(l))]...)
		return append(dst, b[4:4+l]...), 4 + l, nil
	case STRUCT:
		pos := 0
		var last int16
		for {
			ft, id, n, err := Binary.ReadFieldBegin(b[pos:])
			if err != nil {
				return dst, pos, err
			}
			pos += n
			if ft == STOP {
				return append(dst, ctStop), pos, nil
			}
			if ft == BOOL {
				v, n, err := Binary.ReadBool(b[pos:])
				if err != nil {
					return dst, pos, err
				}
				pos += n
				dst = append(dst, s[:Compact.WriteFieldBool(s[:], id, last, v)]...)
			} else {
				if toCompact[ft] == 0 {
					return dst, pos, newError(InvalidData, "field %d has unknown type %s", id, ft)
				}
				dst = append(dst, s[:Compact.WriteFieldBegin(s[:], ft, id, last)]...)
				if dst, n, err = binaryToCompact(dst, b[pos:], ft, depth-1); err != nil {
					return dst, pos, err
				}
				pos += n
			}
			last = id
		}
	case LIST, SET:
		elem, size, pos, err := binaryReadList(b, t.String())
		if err != nil {
			return dst, 0, err
		}
		dst = append(dst, s[:Compact.WriteListBegin(s[:], elem, size)]...)
		return binaryElemsToCompact(dst, b, pos, size, elem, 0, depth-1)
	case MAP:
		k, v, size, pos, err := Binary.ReadMapBegin(b)
		if err != nil {
			return dst, 0, err
		}
		dst = append(dst, s[:Compact.WriteMapBegin(s[:], k, v, size)]...)
		return binaryElemsToCompact(dst, b, pos, size, k, v, depth-1)
	}
	return dst, 0, newError(InvalidData, "cannot convert unknown type %s", t)
}

// binaryElemsToCompact converts the size elements of a container at b[pos:]
// (pairs of types k and v when v is not 0).
func binaryElemsToCompact(dst, b []byte, pos, size int, k, v TType, depth int) ([]byte, int, error) {
	for i := 0; i < size; i++ {
		for _, t := range [2]TType{k, v} {
			if t == 0 {
				continue
			}
			var n int
			var err error
			if dst, n, err = binaryToCompact(dst, b[pos:], t, depth); err != nil {
				return dst, pos, err
			}
			pos += n
		}
	}
	return dst, pos, nil
}

// compactToBinary appends the binary encoding of the compact value of type
// t at the start of b, and returns the bytes of b it took.
func compactToBinary(dst, b []byte, t TType, depth int) ([]byte, int, error) {
	var s [16]byte
	if depth <= 0 && (t == STRUCT || t == LIST || t == SET || t == MAP) {
		return dst, 0, errDepth()
	}
	switch t {
	case BOOL:
		v, n, err := Compact.ReadBool(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Binary.WriteBool(s[:], v)]...), n, nil
	case BYTE:
		v, n, err := Compact.ReadI8(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, byte(v)), n, nil
	case I16:
		v, n, err := Compact.ReadI16(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Binary.WriteI16(s[:], v)]...), n, nil
	case I32:
		v, n, err := Compact.ReadI32(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Binary.WriteI32(s[:], v)]...), n, nil
	case I64:
		v, n, err := Compact.ReadI64(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, s[:Binary.WriteI64(s[:], v)]...), n, nil
	case DOUBLE:
		v, n, err := Compact.ReadDouble(b)
		if err != nil {
			return dst, 0, err
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(v)), n, nil
	case UUID:
		v, n, err := Compact.ReadUUID(b)
		if err != nil {
			return dst, 0, err
		}
		return append(dst, v[:]...), n, nil
	case STRING:
		l, m, err := compactLen(b, "string", "string length")
		if err != nil {
			return dst, 0, err
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(l))
		return append(dst, b[m:m+l]...), m + l, nil
	case STRUCT:
		pos := 0
		var last int16
		for {
			ft, id, bv, hasBool, n, err := Compact.ReadFieldBegin(b[pos:], last)
			if err != nil {
				return dst, pos, err
			}
			pos += n
			if ft == STOP {
				return append(dst, byte(STOP)), pos, nil
			}
			last = id
			dst = append(dst, s[:Binary.WriteFieldBegin(s[:], ft, id)]...)
			if hasBool {
				dst = append(dst, s[:Binary.WriteBool(s[:], bv)]...)
				continue
			}
			if dst, n, err = compactToBinary(dst, b[pos:], ft, depth-1); err != nil {
				return dst, pos, err
			}
			pos += n
		}
	case LIST, SET:
		elem, size, pos, err := compactReadList(b, t.String(), t.String()+" size")
		if err != nil {
			return dst, 0, err
		}
		dst = append(dst, s[:Binary.WriteListBegin(s[:], elem, size)]...)
		return compactElemsToBinary(dst, b, pos, size, elem, 0, depth-1)
	case MAP:
		k, v, size, pos, err := Compact.ReadMapBegin(b)
		if err != nil {
			return dst, 0, err
		}
		dst = append(dst, s[:Binary.WriteMapBegin(s[:], k, v, size)]...)
		return compactElemsToBinary(dst, b, pos, size, k, v, depth-1)
	}
	return dst, 0, newError(InvalidData, "cannot convert unknown type %s", t)
}

// compactElemsToBinary converts the size elements of a container at
// b[pos:] (pairs of types k and v when v is not 0).
func compactElemsToBinary(dst, b []byte, pos, size int, k, v TType, depth int) ([]byte, int, error) {
	for i := 0; i < size; i++ {
		for _, t := range [2]TType{k, v} {
			if t == 0 {
				continue
			}
			var n int
			var err error
			if dst, n, err = compactToBinary(dst, b[pos:], t, depth); err != nil {
				return dst, pos, err
			}
			pos += n
		}
	}
	return dst, pos, nil
}
