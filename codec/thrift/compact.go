package thrift

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
)

// CompactProtocol is the Thrift compact protocol: zigzag varints, field ids
// as deltas, bools folded into field headers, little-endian doubles. It has
// no state (the last field id of the struct being read or written is passed
// explicitly); use the value [Compact].
type CompactProtocol struct{}

// Compact is the compact protocol.
var Compact CompactProtocol

// Compact protocol constants.
const (
	compactProtocolID = 0x82
	compactVersion    = 1
	compactVersionMsk = 0x1f
	compactTypeShift  = 5
)

// Compact type tags (4 bits on the wire).
const (
	ctStop   = 0
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctDouble = 7
	ctBinary = 8
	ctList   = 9
	ctSet    = 10
	ctMap    = 11
	ctStruct = 12
	ctUUID   = 13
)

// badType marks a compact tag with no TType.
const badType TType = 0xff

// toCompact maps a TType to its compact tag. BOOL maps to ctTrue, which is
// what Apache's implementations write as a bool element type.
var toCompact = [256]byte{
	BOOL: ctTrue, BYTE: ctByte, I16: ctI16, I32: ctI32, I64: ctI64,
	DOUBLE: ctDouble, STRING: ctBinary, LIST: ctList, SET: ctSet, MAP: ctMap,
	STRUCT: ctStruct, UUID: ctUUID,
}

// fromCompact maps a compact tag to a TType (both bool tags to BOOL).
var fromCompact = [16]TType{
	ctStop: STOP, ctTrue: BOOL, ctFalse: BOOL, ctByte: BYTE, ctI16: I16,
	ctI32: I32, ctI64: I64, ctDouble: DOUBLE, ctBinary: STRING, ctList: LIST,
	ctSet: SET, ctMap: MAP, ctStruct: STRUCT, ctUUID: UUID, 14: badType, 15: badType,
}

// fastField is fromCompact for the field types ReadFieldBegin's fast path
// handles, STOP for the others (stop, bools, invalid tags).
var fastField = [16]TType{
	ctByte: BYTE, ctI16: I16, ctI32: I32, ctI64: I64, ctDouble: DOUBLE,
	ctBinary: STRING, ctList: LIST, ctSet: SET, ctMap: MAP, ctStruct: STRUCT, ctUUID: UUID,
}

// compactMin is the smallest compact wire size of a value of each type.
var compactMin = [256]uint8{
	BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 1, I32: 1, I64: 1, STRING: 1,
	STRUCT: 1, MAP: 1, SET: 1, LIST: 1, UUID: 16,
}

// compactFixed is the compact wire size of the fixed-size types.
var compactFixed = [256]uint8{BOOL: 1, BYTE: 1, DOUBLE: 8, UUID: 16}

func zigzag32(v int32) uint64 { return uint64(uint32(v<<1) ^ uint32(v>>31)) }
func zigzag64(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }
func unzig32(u uint32) int32  { return int32(u>>1) ^ -int32(u&1) }
func unzig64(u uint64) int64  { return int64(u>>1) ^ -int64(u&1) }

// uvarintLen is the size of x as a varint.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// putUvarint writes x as a varint (LEB128, low 7 bits first).
func putUvarint(b []byte, x uint64) int {
	i := 0
	for x >= 0x80 {
		b[i] = byte(x) | 0x80
		x >>= 7
		i++
	}
	b[i] = byte(x)
	return i + 1
}

// readUvarint32 reads a varint of at most 5 bytes whose value fits in 32 bits.
// what names the value (such as "i32" or "map size") for the error.
func readUvarint32(b []byte, what string) (uint32, int, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint32(b[0]), 1, nil
	}
	return readUvarint32Slow(b, what)
}

func readUvarint32Slow(b []byte, what string) (uint32, int, error) {
	var x uint32
	var s uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		if c < 0x80 {
			if i == 4 && c > 0x0f {
				break
			}
			return x | uint32(c)<<s, i + 1, nil
		}
		x |= uint32(c&0x7f) << s
		s += 7
	}
	if len(b) < 5 {
		return 0, 0, newError(UnexpectedEOF, "%s varint cut off after %d bytes", what, len(b))
	}
	return 0, 0, newError(InvalidData, "%s varint overflows 32 bits", what)
}

// readUvarint64 reads a varint of at most 10 bytes whose value fits in 64 bits.
// what names the value for the error.
func readUvarint64(b []byte, what string) (uint64, int, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1, nil
	}
	return readUvarint64Slow(b, what)
}

func readUvarint64Slow(b []byte, what string) (uint64, int, error) {
	var x uint64
	var s uint
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		if c < 0x80 {
			if i == 9 && c > 1 {
				break
			}
			return x | uint64(c)<<s, i + 1, nil
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	if len(b) < 10 {
		return 0, 0, newError(UnexpectedEOF, "%s varint cut off after %d bytes", what, len(b))
	}
	return 0, 0, newError(InvalidData, "%s varint overflows 64 bits", what)
}

// ---- sizes ----

// MessageBeginLength returns the size of a message header.
func (CompactProtocol) MessageBeginLength(name string, seq int32) int {
	return 2 + uvarintLen(uint64(uint32(seq))) + uvarintLen(uint64(len(name))) + len(name)
}

// FieldBeginLength returns the size of a field header for id after lastID.
func (CompactProtocol) FieldBeginLength(t TType, id, lastID int16) int {
	if d := int(id) - int(lastID); d > 0 && d <= 15 {
		return 1
	}
	return 1 + uvarintLen(zigzag32(int32(id)))
}

// FieldBoolLength returns the size of a bool field (its header holds the value).
func (CompactProtocol) FieldBoolLength(id, lastID int16) int {
	return Compact.FieldBeginLength(BOOL, id, lastID)
}

// FieldStopLength returns 1.
func (CompactProtocol) FieldStopLength() int { return 1 }

// ListBeginLength returns the size of a list header for size elements.
func (CompactProtocol) ListBeginLength(size int) int {
	if size < 15 {
		return 1
	}
	return 1 + uvarintLen(uint64(size))
}

// SetBeginLength returns the size of a set header for size elements.
func (CompactProtocol) SetBeginLength(size int) int { return Compact.ListBeginLength(size) }

// MapBeginLength returns the size of a map header for size entries.
func (CompactProtocol) MapBeginLength(size int) int {
	if size == 0 {
		return 1
	}
	return 1 + uvarintLen(uint64(size))
}

// BoolLength returns 1 (a bool outside a field header, i.e. in a container).
func (CompactProtocol) BoolLength() int { return 1 }

// ByteLength returns 1.
func (CompactProtocol) ByteLength() int { return 1 }

// I16Length returns the size of v as a zigzag varint.
func (CompactProtocol) I16Length(v int16) int { return uvarintLen(zigzag32(int32(v))) }

// I32Length returns the size of v as a zigzag varint.
func (CompactProtocol) I32Length(v int32) int { return uvarintLen(zigzag32(v)) }

// I64Length returns the size of v as a zigzag varint.
func (CompactProtocol) I64Length(v int64) int { return uvarintLen(zigzag64(v)) }

// DoubleLength returns 8.
func (CompactProtocol) DoubleLength() int { return 8 }

// UUIDLength returns 16.
func (CompactProtocol) UUIDLength() int { return 16 }

// StringLength returns the size of v: varint length and the bytes.
func (CompactProtocol) StringLength(v string) int { return uvarintLen(uint64(len(v))) + len(v) }

// BinaryLength returns the size of v: varint length and the bytes.
func (CompactProtocol) BinaryLength(v []byte) int { return uvarintLen(uint64(len(v))) + len(v) }

// I64SliceLength returns the size of the elements of v (not the header).
func (CompactProtocol) I64SliceLength(v []int64) int {
	n := 0
	for _, x := range v {
		n += uvarintLen(zigzag64(x))
	}
	return n
}

// I32SliceLength returns the size of the elements of v (not the header).
func (CompactProtocol) I32SliceLength(v []int32) int {
	n := 0
	for _, x := range v {
		n += uvarintLen(zigzag32(x))
	}
	return n
}

// DoubleSliceLength returns 8*len(v).
func (CompactProtocol) DoubleSliceLength(v []float64) int { return 8 * len(v) }

// ---- writers ----

// WriteMessageBegin writes a message header: 0x82, version 1 with the type in
// the top 3 bits, the sequence id as a varint, the name.
func (CompactProtocol) WriteMessageBegin(b []byte, name string, t MessageType, seq int32) int {
	b[0] = compactProtocolID
	b[1] = compactVersion | byte(t)<<compactTypeShift
	n := 2 + putUvarint(b[2:], uint64(uint32(seq)))
	return n + Compact.WriteString(b[n:], name)
}

// WriteFieldBegin writes a field header for id after lastID: one byte with
// the delta when it is 1..15, else the type byte and the id as a zigzag
// varint. Use WriteFieldBool for bool fields.
func (CompactProtocol) WriteFieldBegin(b []byte, t TType, id, lastID int16) int {
	return compactField(b, toCompact[t], id, lastID)
}

func compactField(b []byte, ct byte, id, lastID int16) int {
	if d := int(id) - int(lastID); d > 0 && d <= 15 {
		b[0] = byte(d)<<4 | ct
		return 1
	}
	b[0] = ct
	return 1 + putUvarint(b[1:], zigzag32(int32(id)))
}

// WriteFieldBool writes a bool field: its value is the header's type tag.
func (CompactProtocol) WriteFieldBool(b []byte, id, lastID int16, v bool) int {
	ct := byte(ctFalse)
	if v {
		ct = ctTrue
	}
	return compactField(b, ct, id, lastID)
}

// WriteFieldStop writes the 0 byte that ends a struct.
func (CompactProtocol) WriteFieldStop(b []byte) int {
	b[0] = ctStop
	return 1
}

// WriteListBegin writes a list header: size and type in one byte when the
// size is below 15, else 0xF0|type and the size as a varint.
func (CompactProtocol) WriteListBegin(b []byte, elem TType, size int) int {
	ct := toCompact[elem]
	if size < 15 {
		b[0] = byte(size)<<4 | ct
		return 1
	}
	b[0] = 0xf0 | ct
	return 1 + putUvarint(b[1:], uint64(uint32(size)))
}

// WriteSetBegin writes a set header, laid out like a list header.
func (CompactProtocol) WriteSetBegin(b []byte, elem TType, size int) int {
	return Compact.WriteListBegin(b, elem, size)
}

// WriteMapBegin writes a map header: a single 0 byte for an empty map, else
// the size as a varint and a byte with the key type (high) and value type.
func (CompactProtocol) WriteMapBegin(b []byte, k, v TType, size int) int {
	if size == 0 {
		b[0] = 0
		return 1
	}
	n := putUvarint(b, uint64(uint32(size)))
	b[n] = toCompact[k]<<4 | toCompact[v]
	return n + 1
}

// WriteBool writes a bool outside a field header (in a container): 1 for
// true, 2 for false, as Apache's implementations do.
func (CompactProtocol) WriteBool(b []byte, v bool) int {
	x := byte(ctFalse)
	if v {
		x = ctTrue
	}
	b[0] = x
	return 1
}

// WriteI8 writes one byte.
func (CompactProtocol) WriteI8(b []byte, v int8) int {
	b[0] = byte(v)
	return 1
}

// WriteI16 writes v as a zigzag varint.
func (CompactProtocol) WriteI16(b []byte, v int16) int { return putUvarint(b, zigzag32(int32(v))) }

// WriteI32 writes v as a zigzag varint.
func (CompactProtocol) WriteI32(b []byte, v int32) int { return putUvarint(b, zigzag32(v)) }

// WriteI64 writes v as a zigzag varint.
func (CompactProtocol) WriteI64(b []byte, v int64) int { return putUvarint(b, zigzag64(v)) }

// WriteDouble writes the IEEE 754 bits of v little-endian.
func (CompactProtocol) WriteDouble(b []byte, v float64) int {
	binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	return 8
}

// WriteString writes a varint length and the bytes of v.
func (CompactProtocol) WriteString(b []byte, v string) int {
	n := putUvarint(b, uint64(len(v)))
	return n + copy(b[n:n+len(v)], v)
}

// WriteBinary writes a varint length and v.
func (CompactProtocol) WriteBinary(b []byte, v []byte) int {
	n := putUvarint(b, uint64(len(v)))
	return n + copy(b[n:n+len(v)], v)
}

// WriteUUID writes the 16 bytes of v.
func (CompactProtocol) WriteUUID(b []byte, v Tuuid) int {
	*(*[16]byte)(b) = v
	return 16
}

// WriteI64Slice writes the elements of v (not the header) as zigzag varints.
func (CompactProtocol) WriteI64Slice(b []byte, v []int64) int {
	n := 0
	for _, x := range v {
		n += putUvarint(b[n:], zigzag64(x))
	}
	return n
}

// WriteI32Slice writes the elements of v (not the header) as zigzag varints.
func (CompactProtocol) WriteI32Slice(b []byte, v []int32) int {
	n := 0
	for _, x := range v {
		n += putUvarint(b[n:], zigzag32(x))
	}
	return n
}

// WriteDoubleSlice writes the elements of v (not the header), 8 bytes
// little-endian each.
func (CompactProtocol) WriteDoubleSlice(b []byte, v []float64) int {
	b = b[:8*len(v)]
	for i := range v {
		binary.LittleEndian.PutUint64(b[8*i:8*i+8], math.Float64bits(v[i]))
	}
	return len(b)
}

// WriteBinaryNocopy is [BinaryProtocol.WriteBinaryNocopy] for the compact
// protocol: from NocopyThreshold bytes on, only the varint length goes into b
// and v is handed to w; it returns the bytes used in b.
func (CompactProtocol) WriteBinaryNocopy(b []byte, w NocopyWriter, v []byte) int {
	if w == nil || len(v) < NocopyThreshold {
		return Compact.WriteBinary(b, v)
	}
	n := putUvarint(b, uint64(len(v)))
	if w.WriteDirect(v, len(b)-n) != nil {
		return n + copy(b[n:n+len(v)], v)
	}
	return n
}

// WriteStringNocopy is WriteBinaryNocopy for a string.
func (CompactProtocol) WriteStringNocopy(b []byte, w NocopyWriter, v string) int {
	if w == nil || len(v) < NocopyThreshold {
		return Compact.WriteString(b, v)
	}
	n := putUvarint(b, uint64(len(v)))
	if w.WriteDirect(stringBytes(v), len(b)-n) != nil {
		return n + copy(b[n:n+len(v)], v)
	}
	return n
}

// AppendUnknownField appends a field header in the long form (type byte and
// absolute id, valid after any previous field) followed by value, the raw
// encoding of the field's value. For a bool field the value is carried by the
// header and value should be empty. A writer that emits it must continue its
// deltas from id.
func (CompactProtocol) AppendUnknownField(dst []byte, t TType, id int16, boolVal bool, value []byte) []byte {
	ct := toCompact[t]
	if t == BOOL && !boolVal {
		ct = ctFalse
	}
	var hdr [4]byte
	hdr[0] = ct
	n := 1 + putUvarint(hdr[1:], zigzag32(int32(id)))
	return append(append(dst, hdr[:n]...), value...)
}

// ---- readers ----

// ReadMessageBegin reads a message header. The protocol id must be 0x82 and
// the version 1. The sequence id is read as a varint of up to 10 bytes and
// truncated to 32 bits, which accepts writers that sign-extend it.
func (CompactProtocol) ReadMessageBegin(b []byte) (name string, t MessageType, seq int32, n int, err error) {
	if len(b) < 2 {
		return "", 0, 0, 0, errShort("message header", 2, len(b))
	}
	if b[0] != compactProtocolID {
		return "", 0, 0, 0, newError(BadVersion, "message header starts with protocol id 0x%02x, want 0x82", b[0])
	}
	if v := b[1] & compactVersionMsk; v != compactVersion {
		return "", 0, 0, 0, newError(BadVersion, "compact protocol version %d, want 1", v)
	}
	t = MessageType(b[1] >> compactTypeShift)
	s, m, err := readUvarint64(b[2:], "message sequence id")
	if err != nil {
		return "", 0, 0, 0, err
	}
	n = 2 + m
	l, m, err := compactLen(b[n:], "message name", "message name length")
	if err != nil {
		return "", 0, 0, 0, err
	}
	return string(b[n+m : n+m+l]), t, int32(s), n + m + l, nil
}

// ReadFieldBegin reads a field header of a struct whose previous field id was
// lastID (0 for the first). For a bool field, hasBool is true and boolVal is
// the value (there is no value to read after the header). For STOP, id is 0.
func (CompactProtocol) ReadFieldBegin(b []byte, lastID int16) (t TType, id int16, boolVal bool, hasBool bool, n int, err error) {
	// Fast path: short form, not a bool, a known type.
	if len(b) > 0 && b[0] >= 0x10 {
		if t := fastField[b[0]&0x0f]; t != STOP {
			return t, lastID + int16(b[0]>>4), false, false, 1, nil
		}
	}
	return compactFieldSlow(b, lastID)
}

func compactFieldSlow(b []byte, lastID int16) (t TType, id int16, boolVal bool, hasBool bool, n int, err error) {
	if len(b) < 1 {
		return 0, 0, false, false, 0, errShort("field header", 1, 0)
	}
	h := b[0]
	ct := h & 0x0f
	if ct == ctStop {
		return STOP, 0, false, false, 1, nil
	}
	t = fromCompact[ct]
	if t == badType {
		return 0, 0, false, false, 0, newError(InvalidData, "field header has unknown compact type %d", ct)
	}
	n = 1
	if d := h >> 4; d != 0 {
		id = lastID + int16(d)
	} else {
		u, m, err := readUvarint32(b[1:], "field id")
		if err != nil {
			return 0, 0, false, false, 0, err
		}
		v := unzig32(u)
		if v != int32(int16(v)) {
			return 0, 0, false, false, 0, newError(InvalidData, "field id %d does not fit in i16", v)
		}
		id = int16(v)
		n += m
	}
	if t == BOOL {
		return BOOL, id, ct == ctTrue, true, n, nil
	}
	return t, id, false, false, n, nil
}

// ReadListBegin reads a list header; the size is checked against the limits
// and the bytes left after the header.
func (CompactProtocol) ReadListBegin(b []byte) (elem TType, size int, n int, err error) {
	return compactReadList(b, "list", "list size")
}

// ReadSetBegin reads a set header, checked like ReadListBegin.
func (CompactProtocol) ReadSetBegin(b []byte) (elem TType, size int, n int, err error) {
	return compactReadList(b, "set", "set size")
}

// compactReadList reads a list or set header; what names the container and
// sizeWhat its size varint in errors.
func compactReadList(b []byte, what, sizeWhat string) (TType, int, int, error) {
	if len(b) < 1 {
		return 0, 0, 0, errShort(what+" header", 1, 0)
	}
	h := b[0]
	elem := fromCompact[h&0x0f]
	if elem == STOP {
		elem = badType
	}
	size := int64(h >> 4)
	n := 1
	if size == 15 {
		u, m, err := readUvarint32(b[1:], sizeWhat)
		if err != nil {
			return 0, 0, 0, err
		}
		size = int64(int32(u))
		n += m
	}
	min := compactMin[elem]
	if !checkContainer(int32(size), min, len(b)-n) {
		return 0, 0, 0, errContainer(what, size, int(min), len(b)-n, compactTypeName(h&0x0f))
	}
	return elem, int(size), n, nil
}

func compactTypeName(ct byte) string {
	if t := fromCompact[ct&0x0f]; t != badType && t != STOP {
		return t.String()
	}
	return "compact type " + strconv.Itoa(int(ct&0x0f))
}

// ReadMapBegin reads a map header (a single 0 byte for an empty map, whose
// key and value types are returned as STOP), checked like ReadListBegin.
func (CompactProtocol) ReadMapBegin(b []byte) (k, v TType, size int, n int, err error) {
	u, n, err := readUvarint32(b, "map size")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	s := int32(u)
	if s == 0 {
		return STOP, STOP, 0, n, nil
	}
	if s < 0 {
		return 0, 0, 0, 0, errContainer("map", int64(s), 0, len(b)-n, "")
	}
	if len(b) <= n {
		return 0, 0, 0, 0, errShort("map key and value types", 1, 0)
	}
	kv := b[n]
	n++
	k, v = fromCompact[kv>>4], fromCompact[kv&0x0f]
	min := pairMin(compactMin[k], compactMin[v])
	if !checkContainer(s, min, len(b)-n) {
		return 0, 0, 0, 0, errContainer("map", int64(s), int(min), len(b)-n, compactTypeName(kv>>4)+"/"+compactTypeName(kv&0x0f))
	}
	return k, v, int(s), n, nil
}

// ReadBool reads a bool outside a field header: 1 is true, anything else
// (Apache writes 2, the specification says 0) is false.
func (CompactProtocol) ReadBool(b []byte) (bool, int, error) {
	if len(b) < 1 {
		return false, 0, errShort("bool", 1, 0)
	}
	return b[0] == ctTrue, 1, nil
}

// ReadI8 reads one byte.
func (CompactProtocol) ReadI8(b []byte) (int8, int, error) {
	if len(b) < 1 {
		return 0, 0, errShort("byte", 1, 0)
	}
	return int8(b[0]), 1, nil
}

// ReadI16 reads a zigzag varint that must fit in 16 bits.
func (CompactProtocol) ReadI16(b []byte) (int16, int, error) {
	u, n, err := readUvarint32(b, "i16")
	if err != nil {
		return 0, 0, err
	}
	v := unzig32(u)
	if v != int32(int16(v)) {
		return 0, 0, newError(InvalidData, "i16 value %d out of range", v)
	}
	return int16(v), n, nil
}

// ReadI32 reads a zigzag varint of at most 5 bytes.
func (CompactProtocol) ReadI32(b []byte) (int32, int, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return unzig32(uint32(b[0])), 1, nil
	}
	return compactI32Slow(b)
}

func compactI32Slow(b []byte) (int32, int, error) {
	u, n, err := readUvarint32Slow(b, "i32") // u is 0 on error
	return unzig32(u), n, err
}

// ReadI64 reads a zigzag varint of at most 10 bytes.
func (CompactProtocol) ReadI64(b []byte) (int64, int, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return unzig64(uint64(b[0])), 1, nil
	}
	return compactI64Slow(b)
}

func compactI64Slow(b []byte) (int64, int, error) {
	u, n, err := readUvarint64Slow(b, "i64") // u is 0 on error
	return unzig64(u), n, err
}

// ReadDouble reads a little-endian IEEE 754 double.
func (CompactProtocol) ReadDouble(b []byte) (float64, int, error) {
	if len(b) >= 8 {
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), 8, nil
	}
	return 0, 0, errShort("double", 8, len(b))
}

// compactLen reads and checks a varint string/binary length; it returns the
// length and the size of the varint. what names the value and lenWhat its
// length varint in errors.
func compactLen(b []byte, what, lenWhat string) (int, int, error) {
	u, m, err := readUvarint32(b, lenWhat)
	if err != nil {
		return 0, 0, err
	}
	n := int32(u)
	if uint64(n) > uint64(len(b)-m) || int64(n) > maxStringSize.Load() {
		return 0, 0, errSize(what, int64(n), len(b)-m)
	}
	return int(n), m, nil
}

// ReadString reads a varint-length string and copies it.
func (CompactProtocol) ReadString(b []byte) (string, int, error) {
	n, m, err := compactLen(b, "string", "string length")
	if err != nil {
		return "", 0, err
	}
	return string(b[m : m+n]), m + n, nil
}

// ReadBinary reads a varint-length binary and copies it (never nil).
func (CompactProtocol) ReadBinary(b []byte) ([]byte, int, error) {
	n, m, err := compactLen(b, "binary", "binary length")
	if err != nil {
		return nil, 0, err
	}
	v := make([]byte, n)
	copy(v, b[m:m+n])
	return v, m + n, nil
}

// ReadStringNocopy reads a string that aliases b: the caller must keep b
// alive and unchanged while the string is in use.
func (CompactProtocol) ReadStringNocopy(b []byte) (string, int, error) {
	n, m, err := compactLen(b, "string", "string length")
	if err != nil {
		return "", 0, err
	}
	return bytesString(b[m : m+n]), m + n, nil
}

// ReadBinaryNocopy reads a binary as a sub-slice of b with its capacity cut
// to its length.
func (CompactProtocol) ReadBinaryNocopy(b []byte) ([]byte, int, error) {
	n, m, err := compactLen(b, "binary", "binary length")
	if err != nil {
		return nil, 0, err
	}
	return b[m : m+n : m+n], m + n, nil
}

// ReadUUID reads 16 bytes.
func (CompactProtocol) ReadUUID(b []byte) (Tuuid, int, error) {
	if len(b) < 16 {
		return Tuuid{}, 0, errShort("uuid", 16, len(b))
	}
	return Tuuid(b[:16]), 16, nil
}

// ReadI64Slice fills dst with len(dst) zigzag varints (the elements of a list
// whose header was read already).
func (CompactProtocol) ReadI64Slice(b []byte, dst []int64) (int, error) {
	p := 0
	for i := range dst {
		// The varint loop is written out here (readUvarint64 would be a call
		// per element); any problem is handed to readUvarint64Slow to explain.
		var x uint64
		var s uint
		j := p
		for {
			if j >= len(b) || j-p == 10 {
				_, _, err := readUvarint64Slow(b[p:], "i64")
				return 0, err
			}
			c := b[j]
			j++
			if c < 0x80 {
				if j-p == 10 && c > 1 {
					_, _, err := readUvarint64Slow(b[p:], "i64")
					return 0, err
				}
				x |= uint64(c) << s
				break
			}
			x |= uint64(c&0x7f) << s
			s += 7
		}
		dst[i] = unzig64(x)
		p = j
	}
	return p, nil
}

// ReadI32Slice fills dst with len(dst) zigzag varints.
func (CompactProtocol) ReadI32Slice(b []byte, dst []int32) (int, error) {
	n := 0
	for i := range dst {
		u, m, err := readUvarint32(b[n:], "i32")
		if err != nil {
			return 0, err
		}
		dst[i] = unzig32(u)
		n += m
	}
	return n, nil
}

// ReadDoubleSlice fills dst with len(dst) little-endian doubles.
func (CompactProtocol) ReadDoubleSlice(b []byte, dst []float64) (int, error) {
	if len(b)/8 < len(dst) {
		return 0, errShort("list of double", 8*len(dst), len(b))
	}
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i : 8*i+8]))
	}
	return len(b), nil
}

// Skip returns the size of the value of type t at the start of b, without
// allocating. Structs and containers may nest maxDepth levels deep (0 or
// less means the configured MaxDepth; at most MaxDepthCeiling). A BOOL here
// is a container element (one byte); bool fields inside skipped structs are
// handled.
func (CompactProtocol) Skip(b []byte, t TType, maxDepth int) (int, error) {
	d := depthOrDefault(maxDepth)
	pos, err := compactSkip(b, 0, t, d)
	if err != nil {
		return 0, skipError(err, pos, d)
	}
	return pos, nil
}

// SkipDepth skips a value that sits at nesting depth depth, so it may nest
// MaxDepth-depth levels further. Skip counts the structs and containers
// around a value; generated readers pass the number of structs around an
// unknown field (see [Limits.MaxDepth]).
func (CompactProtocol) SkipDepth(b []byte, t TType, depth int) (int, error) {
	d := int(maxDepth.Load())
	pos, err := compactSkip(b, 0, t, d-max(depth, 0))
	if err != nil {
		return 0, skipError(err, pos, d)
	}
	return pos, nil
}

func compactSkip(b []byte, pos int, t TType, depth int) (int, error) {
	if f := int(compactFixed[t]); f != 0 {
		if len(b)-pos < f {
			return pos, errShort(t.String(), f, len(b)-pos)
		}
		return pos + f, nil
	}
	switch t {
	case I16:
		u, m, err := readUvarint32(b[pos:], "I16")
		if err == nil {
			if v := unzig32(u); v != int32(int16(v)) {
				return pos, newError(InvalidData, "i16 value %d out of range", v)
			}
		}
		return pos + m, err
	case I32:
		_, m, err := readUvarint32(b[pos:], "I32")
		return pos + m, err
	case I64:
		_, m, err := readUvarint64(b[pos:], "I64")
		return pos + m, err
	case STRING:
		n, m, err := compactLen(b[pos:], "string", "string length")
		return pos + m + n, err
	case STRUCT:
		if depth <= 0 {
			return pos, errDepth()
		}
		var last int16
		for {
			ft, id, _, hasBool, n, err := Compact.ReadFieldBegin(b[pos:], last)
			if err != nil {
				return pos, err
			}
			if ft == STOP {
				return pos + 1, nil
			}
			pos += n
			last = id
			if hasBool {
				continue
			}
			if pos, err = compactSkip(b, pos, ft, depth-1); err != nil {
				return pos, err
			}
		}
	case LIST, SET:
		if depth <= 0 {
			return pos, errDepth()
		}
		what, sizeWhat := "LIST", "LIST size"
		if t == SET {
			what, sizeWhat = "SET", "SET size"
		}
		elem, size, n, err := compactReadList(b[pos:], what, sizeWhat)
		if err != nil {
			return pos, err
		}
		pos += n
		if f := int(compactFixed[elem]); f != 0 {
			return pos + size*f, nil
		}
		for i := 0; i < size; i++ {
			if pos, err = compactSkip(b, pos, elem, depth-1); err != nil {
				return pos, err
			}
		}
		return pos, nil
	case MAP:
		if depth <= 0 {
			return pos, errDepth()
		}
		k, v, size, n, err := Compact.ReadMapBegin(b[pos:])
		if err != nil {
			return pos, err
		}
		pos += n
		fk, fv := int(compactFixed[k]), int(compactFixed[v])
		if fk != 0 && fv != 0 {
			return pos + size*(fk+fv), nil
		}
		for i := 0; i < size; i++ {
			if pos, err = compactSkip(b, pos, k, depth-1); err != nil {
				return pos, err
			}
			if pos, err = compactSkip(b, pos, v, depth-1); err != nil {
				return pos, err
			}
		}
		return pos, nil
	}
	return pos, newError(InvalidData, "cannot skip unknown type %s", t)
}
