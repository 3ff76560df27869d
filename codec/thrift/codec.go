package thrift

// FastCodec is what generated structs implement for the binary protocol.
//
// BLength returns the exact encoded size; FastWrite writes the struct at b[0:]
// (b has at least BLength bytes) and returns the bytes written; FastRead reads
// one struct from b[0:] and returns the bytes consumed.
type FastCodec interface {
	BLength() int
	FastWrite(b []byte) int
	FastRead(b []byte) (int, error)
}

// NocopyCodec is implemented by generated structs that can hand large strings
// and binaries to a [NocopyWriter] by reference.
type NocopyCodec interface {
	FastWriteNocopy(b []byte, w NocopyWriter) int
}

// CompactCodec is implemented by generated structs that support the compact
// protocol.
type CompactCodec interface {
	BLengthCompact() int
	FastWriteCompact(b []byte) int
	FastReadCompact(b []byte) (int, error)
}

// Marshal encodes v with the binary protocol into a new slice of exactly
// v.BLength() bytes (one allocation).
func Marshal(v FastCodec) []byte {
	b := make([]byte, v.BLength())
	return b[:v.FastWrite(b)]
}

// Unmarshal decodes one struct from the start of b into v with the binary
// protocol. Bytes after the struct are ignored; use v.FastRead directly to
// learn how many were consumed.
func Unmarshal(b []byte, v FastCodec) error {
	_, err := v.FastRead(b)
	return err
}

// MarshalCompact encodes v with the compact protocol into a new slice of
// exactly v.BLengthCompact() bytes (one allocation).
func MarshalCompact(v CompactCodec) []byte {
	b := make([]byte, v.BLengthCompact())
	return b[:v.FastWriteCompact(b)]
}

// UnmarshalCompact decodes one struct from the start of b into v with the
// compact protocol. Bytes after the struct are ignored.
func UnmarshalCompact(b []byte, v CompactCodec) error {
	_, err := v.FastReadCompact(b)
	return err
}
