package thrift

import (
	"encoding/binary"
	"math"
)

// BinaryProtocol is the Thrift binary protocol: fixed-width big-endian
// integers, 4-byte length prefixes. It has no state; use the value [Binary].
type BinaryProtocol struct{}

// Binary is the binary protocol.
var Binary BinaryProtocol

// Wire sizes of the fixed-size parts of the binary protocol.
const (
	FieldBeginLength = 3
	FieldStopLength  = 1
	ListBeginLength  = 5
	SetBeginLength   = 5
	MapBeginLength   = 6
	BoolLength       = 1
	ByteLength       = 1
	I16Length        = 2
	I32Length        = 4
	I64Length        = 8
	DoubleLength     = 8
	UUIDLength       = 16
)

// versionStrict is the high half of the first word of a strict message header.
const (
	versionStrict = 0x80010000
	versionMask   = 0xffff0000
)

// binaryMin is the smallest binary wire size of a value of each type, 0 for
// tags that are not value types.
var binaryMin = [256]uint8{
	BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 2, I32: 4, I64: 8, STRING: 4,
	STRUCT: 1, MAP: 6, SET: 5, LIST: 5, UUID: 16,
}

// binaryFixed is the binary wire size of the fixed-size types, 0 for others.
var binaryFixed = [256]uint8{
	BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 2, I32: 4, I64: 8, UUID: 16,
}

// StringLength returns the encoded size of v: 4 + len(v).
func (BinaryProtocol) StringLength(v string) int { return 4 + len(v) }

// BinaryLength returns the encoded size of v: 4 + len(v).
func (BinaryProtocol) BinaryLength(v []byte) int { return 4 + len(v) }

// MessageBeginLength returns the size of a strict message header for name.
func (BinaryProtocol) MessageBeginLength(name string) int { return 12 + len(name) }

// WriteMessageBegin writes a strict message header: version word
// 0x80010000|t, the name, the sequence id.
func (BinaryProtocol) WriteMessageBegin(b []byte, name string, t MessageType, seq int32) int {
	b = b[:12+len(name)]
	binary.BigEndian.PutUint32(b, versionStrict|uint32(t)&0xff)
	binary.BigEndian.PutUint32(b[4:], uint32(len(name)))
	copy(b[8:], name)
	binary.BigEndian.PutUint32(b[8+len(name):], uint32(seq))
	return len(b)
}

// WriteFieldBegin writes a field header: type byte, i16 id.
func (BinaryProtocol) WriteFieldBegin(b []byte, t TType, id int16) int {
	b = b[:3]
	b[0] = byte(t)
	binary.BigEndian.PutUint16(b[1:], uint16(id))
	return 3
}

// WriteFieldStop writes the STOP byte that ends a struct.
func (BinaryProtocol) WriteFieldStop(b []byte) int {
	b[0] = byte(STOP)
	return 1
}

// WriteListBegin writes a list header: element type, i32 size.
func (BinaryProtocol) WriteListBegin(b []byte, elem TType, size int) int {
	b = b[:5]
	b[0] = byte(elem)
	binary.BigEndian.PutUint32(b[1:], uint32(size))
	return 5
}

// WriteSetBegin writes a set header, which is laid out like a list header.
func (BinaryProtocol) WriteSetBegin(b []byte, elem TType, size int) int {
	b = b[:5]
	b[0] = byte(elem)
	binary.BigEndian.PutUint32(b[1:], uint32(size))
	return 5
}

// WriteMapBegin writes a map header: key type, value type, i32 size.
func (BinaryProtocol) WriteMapBegin(b []byte, k, v TType, size int) int {
	b = b[:6]
	b[0] = byte(k)
	b[1] = byte(v)
	binary.BigEndian.PutUint32(b[2:], uint32(size))
	return 6
}

// WriteBool writes 1 for true, 0 for false.
func (BinaryProtocol) WriteBool(b []byte, v bool) int {
	var x byte
	if v {
		x = 1
	}
	b[0] = x
	return 1
}

// WriteI8 writes one byte (the Thrift type byte, also called i8).
func (BinaryProtocol) WriteI8(b []byte, v int8) int {
	b[0] = byte(v)
	return 1
}

// WriteI16 writes v big-endian.
func (BinaryProtocol) WriteI16(b []byte, v int16) int {
	binary.BigEndian.PutUint16(b, uint16(v))
	return 2
}

// WriteI32 writes v big-endian.
func (BinaryProtocol) WriteI32(b []byte, v int32) int {
	binary.BigEndian.PutUint32(b, uint32(v))
	return 4
}

// WriteI64 writes v big-endian.
func (BinaryProtocol) WriteI64(b []byte, v int64) int {
	binary.BigEndian.PutUint64(b, uint64(v))
	return 8
}

// WriteDouble writes the IEEE 754 bits of v big-endian.
func (BinaryProtocol) WriteDouble(b []byte, v float64) int {
	binary.BigEndian.PutUint64(b, math.Float64bits(v))
	return 8
}

// WriteString writes a 4-byte length and the bytes of v.
func (BinaryProtocol) WriteString(b []byte, v string) int {
	binary.BigEndian.PutUint32(b, uint32(len(v)))
	return 4 + copy(b[4:4+len(v)], v)
}

// WriteBinary writes a 4-byte length and v.
func (BinaryProtocol) WriteBinary(b []byte, v []byte) int {
	binary.BigEndian.PutUint32(b, uint32(len(v)))
	return 4 + copy(b[4:4+len(v)], v)
}

// WriteUUID writes the 16 bytes of v.
func (BinaryProtocol) WriteUUID(b []byte, v Tuuid) int {
	*(*[16]byte)(b) = v
	return 16
}

// WriteI64Slice writes the elements of v (not the list header), 8 bytes each.
func (BinaryProtocol) WriteI64Slice(b []byte, v []int64) int {
	b = b[:8*len(v)] // the only bounds check: the loop's are proved away
	for i := range v {
		binary.BigEndian.PutUint64(b[8*i:8*i+8], uint64(v[i]))
	}
	return len(b)
}

// WriteI32Slice writes the elements of v (not the list header), 4 bytes each.
func (BinaryProtocol) WriteI32Slice(b []byte, v []int32) int {
	b = b[:4*len(v)]
	for i := range v {
		binary.BigEndian.PutUint32(b[4*i:4*i+4], uint32(v[i]))
	}
	return len(b)
}

// WriteDoubleSlice writes the elements of v (not the list header), 8 bytes each.
func (BinaryProtocol) WriteDoubleSlice(b []byte, v []float64) int {
	b = b[:8*len(v)]
	for i := range v {
		binary.BigEndian.PutUint64(b[8*i:8*i+8], math.Float64bits(v[i]))
	}
	return len(b)
}

// NocopyWriter accepts a byte slice by reference, to be sent after what has
// been written so far and before what follows. remainCap is how much of the
// current buffer after the caller's position is still unused. The writer must
// not modify p and the caller must keep p unchanged until it is sent.
type NocopyWriter interface {
	WriteDirect(p []byte, remainCap int) error
}

// NocopyThreshold is the size from which WriteBinaryNocopy and
// WriteStringNocopy hand the bytes over by reference instead of copying.
const NocopyThreshold = 4096

// WriteBinaryNocopy writes v like WriteBinary, except that when w is not nil
// and len(v) >= NocopyThreshold it writes only the 4-byte length into b, hands
// v to w.WriteDirect and returns 4. b must have room for the whole encoding
// (as BinaryLength computes it): if WriteDirect fails, v is copied into b
// after all. The caller trims the unused room afterwards.
func (BinaryProtocol) WriteBinaryNocopy(b []byte, w NocopyWriter, v []byte) int {
	if w == nil || len(v) < NocopyThreshold {
		return Binary.WriteBinary(b, v)
	}
	binary.BigEndian.PutUint32(b, uint32(len(v)))
	if w.WriteDirect(v, len(b)-4) != nil {
		return 4 + copy(b[4:4+len(v)], v)
	}
	return 4
}

// WriteStringNocopy is WriteBinaryNocopy for a string.
func (BinaryProtocol) WriteStringNocopy(b []byte, w NocopyWriter, v string) int {
	if w == nil || len(v) < NocopyThreshold {
		return Binary.WriteString(b, v)
	}
	binary.BigEndian.PutUint32(b, uint32(len(v)))
	if w.WriteDirect(stringBytes(v), len(b)-4) != nil {
		return 4 + copy(b[4:4+len(v)], v)
	}
	return 4
}

// ReadMessageBegin reads a message header in the strict form (version word,
// name, sequence id) or the old non-strict form (name, type byte, sequence id).
func (BinaryProtocol) ReadMessageBegin(b []byte) (name string, t MessageType, seq int32, n int, err error) {
	if len(b) < 4 {
		return "", 0, 0, 0, errShort("message header", 4, len(b))
	}
	w := int32(binary.BigEndian.Uint32(b))
	if w < 0 {
		if uint32(w)&versionMask != versionStrict {
			return "", 0, 0, 0, newError(BadVersion, "message header starts with 0x%08x, want version 0x8001", uint32(w))
		}
		t = MessageType(w & 0xff)
		name, n, err = binaryMessageName(b[4:])
		if err != nil {
			return "", 0, 0, 0, err
		}
		n += 4
		if len(b)-n < 4 {
			return "", 0, 0, 0, errShort("message sequence id", 4, len(b)-n)
		}
		return name, t, int32(binary.BigEndian.Uint32(b[n:])), n + 4, nil
	}
	// Non-strict: the first word is the name's length.
	name, n, err = binaryMessageName(b)
	if err != nil {
		return "", 0, 0, 0, err
	}
	if len(b)-n < 5 {
		return "", 0, 0, 0, errShort("message type and sequence id", 5, len(b)-n)
	}
	t = MessageType(b[n])
	return name, t, int32(binary.BigEndian.Uint32(b[n+1:])), n + 5, nil
}

// binaryMessageName reads the length-prefixed method name of a message
// header; its errors call it the message name.
func binaryMessageName(b []byte) (string, int, error) {
	n, err := binaryLen(b, "message name")
	if err != nil {
		return "", 0, err
	}
	return string(b[4 : 4+n]), 4 + n, nil
}

// ReadFieldBegin reads a field header. For STOP it consumes one byte and
// returns id 0.
func (BinaryProtocol) ReadFieldBegin(b []byte) (t TType, id int16, n int, err error) {
	// Small enough to inline: one length test, then the three bytes.
	if len(b) >= 3 && b[0] != byte(STOP) {
		return TType(b[0]), int16(b[1])<<8 | int16(b[2]), 3, nil
	}
	return binaryFieldSlow(b)
}

//go:noinline
func binaryFieldSlow(b []byte) (TType, int16, int, error) {
	if len(b) > 0 && b[0] == byte(STOP) {
		return STOP, 0, 1, nil
	}
	return 0, 0, 0, errShort("field header", 3, len(b))
}

// checkContainer is the hot-path test of a declared container size: within
// the limit, of a known element type, and fitting in left bytes.
func checkContainer(size int32, min uint8, left int) bool {
	return uint64(size) <= uint64(maxContainerSize.Load()) &&
		uint64(size)*uint64(min) <= uint64(left) &&
		(min != 0 || size == 0)
}

// ReadListBegin reads a list header. The size is checked against the limits
// and against the bytes left after the header.
func (BinaryProtocol) ReadListBegin(b []byte) (elem TType, size int, n int, err error) {
	if e, s, ok := binaryListOK(b); ok {
		return e, s, 5, nil
	}
	return binaryReadList(b, "list")
}

// ReadSetBegin reads a set header, checked like ReadListBegin.
func (BinaryProtocol) ReadSetBegin(b []byte) (elem TType, size int, n int, err error) {
	if e, s, ok := binaryListOK(b); ok {
		return e, s, 5, nil
	}
	return binaryReadList(b, "set")
}

// binaryListOK is the inlined fast path of a list or set header: it reports
// whether the header is whole and its size acceptable; binaryReadList
// explains a false.
func binaryListOK(b []byte) (TType, int, bool) {
	if len(b) < 5 {
		return 0, 0, false
	}
	elem := TType(b[0])
	size := uint64(binary.BigEndian.Uint32(b[1:5]))
	min := uint64(binaryMin[elem])
	// A negative size reads as more than 2^31 here and fails the first test.
	return elem, int(size), size <= uint64(maxContainerSize.Load()) &&
		size*min <= uint64(len(b)-5) && (min != 0 || size == 0)
}

func binaryReadList(b []byte, what string) (TType, int, int, error) {
	if len(b) < 5 {
		return 0, 0, 0, errShort(what+" header", 5, len(b))
	}
	elem := TType(b[0])
	size := int32(binary.BigEndian.Uint32(b[1:]))
	if !checkContainer(size, binaryMin[elem], len(b)-5) {
		return 0, 0, 0, errContainer(what, int64(size), int(binaryMin[elem]), len(b)-5, elem.String())
	}
	return elem, int(size), 5, nil
}

// ReadMapBegin reads a map header, checked like ReadListBegin (each pair
// needs the smallest key plus the smallest value).
func (BinaryProtocol) ReadMapBegin(b []byte) (k, v TType, size int, n int, err error) {
	if len(b) >= 6 {
		k, v = TType(b[0]), TType(b[1])
		s := uint64(binary.BigEndian.Uint32(b[2:6]))
		min := uint64(binaryMin[k]) + uint64(binaryMin[v])
		if s <= uint64(maxContainerSize.Load()) && s*min <= uint64(len(b)-6) &&
			(binaryMin[k] != 0 && binaryMin[v] != 0 || s == 0) {
			return k, v, int(s), 6, nil
		}
	}
	return binaryReadMap(b)
}

// binaryReadMap is ReadMapBegin's slow path: it explains a rejected header.
func binaryReadMap(b []byte) (k, v TType, size int, n int, err error) {
	if len(b) < 6 {
		return 0, 0, 0, 0, errShort("map header", 6, len(b))
	}
	k, v = TType(b[0]), TType(b[1])
	s := int32(binary.BigEndian.Uint32(b[2:]))
	min := pairMin(binaryMin[k], binaryMin[v])
	if !checkContainer(s, min, len(b)-6) {
		return 0, 0, 0, 0, errContainer("map", int64(s), int(min), len(b)-6, k.String()+"/"+v.String())
	}
	return k, v, int(s), 6, nil
}

// pairMin is the smallest size of a map entry, 0 if either type is unknown.
func pairMin(k, v uint8) uint8 {
	if k == 0 || v == 0 {
		return 0
	}
	return k + v
}

// ReadBool reads one byte; any non-zero value is true.
func (BinaryProtocol) ReadBool(b []byte) (bool, int, error) {
	if len(b) < 1 {
		return false, 0, errShort("bool", 1, 0)
	}
	return b[0] != 0, 1, nil
}

// ReadI8 reads one byte (the Thrift type byte, also called i8).
func (BinaryProtocol) ReadI8(b []byte) (int8, int, error) {
	if len(b) < 1 {
		return 0, 0, errShort("byte", 1, 0)
	}
	return int8(b[0]), 1, nil
}

// ReadI16 reads a big-endian i16.
func (BinaryProtocol) ReadI16(b []byte) (int16, int, error) {
	if len(b) < 2 {
		return 0, 0, errShort("i16", 2, len(b))
	}
	return int16(binary.BigEndian.Uint16(b)), 2, nil
}

// ReadI32 reads a big-endian i32.
func (BinaryProtocol) ReadI32(b []byte) (int32, int, error) {
	if len(b) < 4 {
		return 0, 0, errShort("i32", 4, len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), 4, nil
}

// ReadI64 reads a big-endian i64.
func (BinaryProtocol) ReadI64(b []byte) (int64, int, error) {
	if len(b) < 8 {
		return 0, 0, errShort("i64", 8, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), 8, nil
}

// ReadDouble reads a big-endian IEEE 754 double.
func (BinaryProtocol) ReadDouble(b []byte) (float64, int, error) {
	if len(b) < 8 {
		return 0, 0, errShortDouble(b)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), 8, nil
}

//go:noinline
func errShortDouble(b []byte) error { return errShort("double", 8, len(b)) }

// binaryLen reads and checks a 4-byte string/binary length prefix.
func binaryLen(b []byte, what string) (int, error) {
	if len(b) < 4 {
		return 0, errShort(what+" length", 4, len(b))
	}
	n := int32(binary.BigEndian.Uint32(b))
	if uint64(n) > uint64(len(b)-4) || int64(n) > maxStringSize.Load() {
		return 0, errSize(what, int64(n), len(b)-4)
	}
	return int(n), nil
}

// binaryLenOK reads a 4-byte length prefix and reports whether it is within
// the limit and the bytes left (false also for a short or negative prefix).
// It is the inlined fast path; binaryLen explains a false.
func binaryLenOK(b []byte) (int, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n := uint64(binary.BigEndian.Uint32(b))
	return int(n), n <= uint64(len(b)-4) && n <= uint64(maxStringSize.Load())
}

// ReadString reads a length-prefixed string and copies it.
func (BinaryProtocol) ReadString(b []byte) (string, int, error) {
	if n, ok := binaryLenOK(b); ok {
		return string(b[4 : 4+n]), 4 + n, nil
	}
	_, err := binaryLen(b, "string")
	return "", 0, err
}

// ReadBinary reads a length-prefixed binary and copies it. An empty binary
// is returned as a non-nil empty slice.
func (BinaryProtocol) ReadBinary(b []byte) ([]byte, int, error) {
	n, err := binaryLen(b, "binary")
	if err != nil {
		return nil, 0, err
	}
	v := make([]byte, n)
	copy(v, b[4:4+n])
	return v, 4 + n, nil
}

// ReadStringNocopy reads a length-prefixed string that aliases b: the caller
// must keep b alive and unchanged while the string is in use.
func (BinaryProtocol) ReadStringNocopy(b []byte) (string, int, error) {
	if len(b) >= 4 {
		n := uint64(binary.BigEndian.Uint32(b))
		if n <= uint64(len(b)-4) && n <= uint64(maxStringSize.Load()) {
			return bytesString(b[4 : 4+n]), 4 + int(n), nil
		}
	}
	return "", 0, binaryStringError(b)
}

// binaryStringError explains why ReadStringNocopy refused b's length prefix.
//
//go:noinline
func binaryStringError(b []byte) error {
	_, err := binaryLen(b, "string")
	return err
}

// binaryBinaryError explains why ReadBinaryNocopy refused b's length prefix.
//
//go:noinline
func binaryBinaryError(b []byte) error {
	_, err := binaryLen(b, "binary")
	return err
}

// ReadBinaryNocopy reads a length-prefixed binary as a sub-slice of b, its
// capacity cut to its length so appends cannot overwrite what follows.
func (BinaryProtocol) ReadBinaryNocopy(b []byte) ([]byte, int, error) {
	if len(b) >= 4 {
		n := uint64(binary.BigEndian.Uint32(b))
		if n <= uint64(len(b)-4) && n <= uint64(maxStringSize.Load()) {
			return b[4 : 4+n : 4+n], 4 + int(n), nil
		}
	}
	return nil, 0, binaryBinaryError(b)
}

// ReadUUID reads 16 bytes.
func (BinaryProtocol) ReadUUID(b []byte) (Tuuid, int, error) {
	if len(b) < 16 {
		return Tuuid{}, 0, errShort("uuid", 16, len(b))
	}
	return Tuuid(b[:16]), 16, nil
}

// ReadI64Slice fills dst with len(dst) big-endian i64s (the elements of a
// list whose header was read already).
func (BinaryProtocol) ReadI64Slice(b []byte, dst []int64) (int, error) {
	if len(b)/8 < len(dst) {
		return 0, errShort("list of i64", 8*len(dst), len(b))
	}
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = int64(binary.BigEndian.Uint64(b[8*i : 8*i+8]))
	}
	return len(b), nil
}

// ReadI32Slice fills dst with len(dst) big-endian i32s.
func (BinaryProtocol) ReadI32Slice(b []byte, dst []int32) (int, error) {
	if len(b)/4 < len(dst) {
		return 0, errShort("list of i32", 4*len(dst), len(b))
	}
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = int32(binary.BigEndian.Uint32(b[4*i : 4*i+4]))
	}
	return len(b), nil
}

// ReadDoubleSlice fills dst with len(dst) big-endian doubles.
func (BinaryProtocol) ReadDoubleSlice(b []byte, dst []float64) (int, error) {
	if len(b)/8 < len(dst) {
		return 0, errShort("list of double", 8*len(dst), len(b))
	}
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = math.Float64frombits(binary.BigEndian.Uint64(b[8*i : 8*i+8]))
	}
	return len(b), nil
}

// Skip returns the size of the value of type t at the start of b, without
// allocating. Structs and containers may nest maxDepth levels deep (0 or
// less means the configured MaxDepth; at most MaxDepthCeiling). Errors say
// at which byte of b they happened.
func (BinaryProtocol) Skip(b []byte, t TType, maxDepth int) (int, error) {
	d := depthOrDefault(maxDepth)
	pos, err := binarySkip(b, 0, t, d)
	if err != nil {
		return 0, skipError(err, pos, d)
	}
	return pos, nil
}

// SkipDepth skips a value that sits at nesting depth depth, so it may nest
// MaxDepth-depth levels further. Skip counts the structs and containers
// around a value; generated readers pass the number of structs around an
// unknown field (see [Limits.MaxDepth]).
func (BinaryProtocol) SkipDepth(b []byte, t TType, depth int) (int, error) {
	d := int(maxDepth.Load())
	pos, err := binarySkip(b, 0, t, d-max(depth, 0))
	if err != nil {
		return 0, skipError(err, pos, d)
	}
	return pos, nil
}

// binarySkip skips the value of type t at b[pos:] with depth levels of
// nesting left. It returns the position after the value, or the position of
// the failing part and the error.
func binarySkip(b []byte, pos int, t TType, depth int) (int, error) {
	if f := int(binaryFixed[t]); f != 0 {
		if len(b)-pos < f {
			return pos, errShort(t.String(), f, len(b)-pos)
		}
		return pos + f, nil
	}
	switch t {
	case STRING:
		n, err := binaryLen(b[pos:], "string")
		if err != nil {
			return pos, err
		}
		return pos + 4 + n, nil
	case STRUCT:
		if depth <= 0 {
			return pos, errDepth()
		}
		for {
			ft, _, n, err := Binary.ReadFieldBegin(b[pos:])
			if err != nil {
				return pos, err
			}
			if ft == STOP {
				return pos + 1, nil
			}
			pos, err = binarySkip(b, pos+n, ft, depth-1)
			if err != nil {
				return pos, err
			}
		}
	case LIST, SET:
		if depth <= 0 {
			return pos, errDepth()
		}
		elem, size, n, err := binaryReadList(b[pos:], t.String())
		if err != nil {
			return pos, err
		}
		pos += n
		if f := int(binaryFixed[elem]); f != 0 {
			return pos + size*f, nil // checkContainer made sure it fits
		}
		for i := 0; i < size; i++ {
			if pos, err = binarySkip(b, pos, elem, depth-1); err != nil {
				return pos, err
			}
		}
		return pos, nil
	case MAP:
		if depth <= 0 {
			return pos, errDepth()
		}
		k, v, size, n, err := Binary.ReadMapBegin(b[pos:])
		if err != nil {
			return pos, err
		}
		pos += n
		fk, fv := int(binaryFixed[k]), int(binaryFixed[v])
		if fk != 0 && fv != 0 {
			return pos + size*(fk+fv), nil
		}
		for i := 0; i < size; i++ {
			if pos, err = binarySkip(b, pos, k, depth-1); err != nil {
				return pos, err
			}
			if pos, err = binarySkip(b, pos, v, depth-1); err != nil {
				return pos, err
			}
		}
		return pos, nil
	}
	return pos, newError(InvalidData, "cannot skip unknown type %s", t)
}

// errDepthExceeded is returned inside the skippers; skipError replaces it by
// an error that names the limit.
var errDepthExceeded = &ProtocolError{Kind: DepthLimit, Msg: "depth limit exceeded"}

func errDepth() error { return errDepthExceeded }

// skipError adds the position, and for the depth limit its value, to an
// error from a skipper.
func skipError(err error, pos, maxDepth int) error {
	if err == errDepthExceeded {
		return newError(DepthLimit, "structs and containers nest deeper than %d levels (at byte %d)", maxDepth, pos)
	}
	return withOffset(err, pos)
}
