package thrift

import "encoding/binary"

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
	if out, n, ok, err := convertScalar(Binary, Compact, dst, b, t); ok {
		return out, n, err
	}
	switch t {
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
		return convertElems(dst, b, pos, size, elem, 0, depth-1, binaryToCompact)
	case MAP:
		k, v, size, pos, err := Binary.ReadMapBegin(b)
		if err != nil {
			return dst, 0, err
		}
		dst = append(dst, s[:Compact.WriteMapBegin(s[:], k, v, size)]...)
		return convertElems(dst, b, pos, size, k, v, depth-1, binaryToCompact)
	}
	return dst, 0, newError(InvalidData, "cannot convert unknown type %s", t)
}

// compactToBinary appends the binary encoding of the compact value of type
// t at the start of b, and returns the bytes of b it took.
func compactToBinary(dst, b []byte, t TType, depth int) ([]byte, int, error) {
	var s [16]byte
	if depth <= 0 && (t == STRUCT || t == LIST || t == SET || t == MAP) {
		return dst, 0, errDepth()
	}
	if out, n, ok, err := convertScalar(Compact, Binary, dst, b, t); ok {
		return out, n, err
	}
	switch t {
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
		if elem == badType && size == 0 {
			// An empty container of no known element type (a binary one
			// of element type STOP, come through compact): STOP again,
			// not the byte of badType, which Apache's readers refuse.
			elem = STOP
		}
		dst = append(dst, s[:Binary.WriteListBegin(s[:], elem, size)]...)
		return convertElems(dst, b, pos, size, elem, 0, depth-1, compactToBinary)
	case MAP:
		k, v, size, pos, err := Compact.ReadMapBegin(b)
		if err != nil {
			return dst, 0, err
		}
		dst = append(dst, s[:Binary.WriteMapBegin(s[:], k, v, size)]...)
		return convertElems(dst, b, pos, size, k, v, depth-1, compactToBinary)
	}
	return dst, 0, newError(InvalidData, "cannot convert unknown type %s", t)
}

// convertElems converts the size elements of a container at b[pos:] (pairs
// of types k and v when v is not 0) with conv.
func convertElems(dst, b []byte, pos, size int, k, v TType, depth int,
	conv func(dst, b []byte, t TType, depth int) ([]byte, int, error)) ([]byte, int, error) {
	for i := 0; i < size; i++ {
		for _, t := range [2]TType{k, v} {
			if t == 0 {
				continue
			}
			var n int
			var err error
			if dst, n, err = conv(dst, b[pos:], t, depth); err != nil {
				return dst, pos, err
			}
			pos += n
		}
	}
	return dst, pos, nil
}

// scalarCodec is what both protocols have for the types of a fixed kind.
type scalarCodec interface {
	ReadBool(b []byte) (bool, int, error)
	WriteBool(b []byte, v bool) int
	ReadI8(b []byte) (int8, int, error)
	WriteI8(b []byte, v int8) int
	ReadI16(b []byte) (int16, int, error)
	WriteI16(b []byte, v int16) int
	ReadI32(b []byte) (int32, int, error)
	WriteI32(b []byte, v int32) int
	ReadI64(b []byte) (int64, int, error)
	WriteI64(b []byte, v int64) int
	ReadDouble(b []byte) (float64, int, error)
	WriteDouble(b []byte, v float64) int
	ReadUUID(b []byte) (Tuuid, int, error)
	WriteUUID(b []byte, v Tuuid) int
}

// convertScalar appends the w encoding of the r-encoded value of type t at
// the start of b, and returns the bytes of b it took; ok is false, and
// nothing done, when t is not a bool, number or uuid.
func convertScalar[R, W scalarCodec](r R, w W, dst, b []byte, t TType) (out []byte, n int, ok bool, err error) {
	var s [16]byte
	m := 0
	switch t {
	case BOOL:
		var v bool
		if v, n, err = r.ReadBool(b); err == nil {
			m = w.WriteBool(s[:], v)
		}
	case BYTE:
		var v int8
		if v, n, err = r.ReadI8(b); err == nil {
			m = w.WriteI8(s[:], v)
		}
	case I16:
		var v int16
		if v, n, err = r.ReadI16(b); err == nil {
			m = w.WriteI16(s[:], v)
		}
	case I32:
		var v int32
		if v, n, err = r.ReadI32(b); err == nil {
			m = w.WriteI32(s[:], v)
		}
	case I64:
		var v int64
		if v, n, err = r.ReadI64(b); err == nil {
			m = w.WriteI64(s[:], v)
		}
	case DOUBLE:
		var v float64
		if v, n, err = r.ReadDouble(b); err == nil {
			m = w.WriteDouble(s[:], v)
		}
	case UUID:
		var v Tuuid
		if v, n, err = r.ReadUUID(b); err == nil {
			m = w.WriteUUID(s[:], v)
		}
	default:
		return dst, 0, false, nil
	}
	if err != nil {
		return dst, 0, true, err
	}
	return append(dst, s[:m]...), n, true, nil
}
