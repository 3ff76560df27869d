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

// WholeReader is implemented by generated structs. FastReadWhole reads one
// struct from b[0:] like FastRead, for a caller that knows b holds that
// struct and nothing after it worth keeping (a whole message payload): where
// FastRead scans a large b for the struct's end so that its private copy of
// the strings' bytes holds that struct only, FastReadWhole copies all of b
// without the scan.
type WholeReader interface {
	FastReadWhole(b []byte) (int, error)
}

// WholeCompactReader is [WholeReader] for the compact protocol.
type WholeCompactReader interface {
	FastReadWholeCompact(b []byte) (int, error)
}

// CompactCodec is implemented by generated structs that support the compact
// protocol.
type CompactCodec interface {
	BLengthCompact() int
	FastWriteCompact(b []byte) int
	FastReadCompact(b []byte) (int, error)
}

// Marshal encodes v with the binary protocol into a new slice of exactly
// v.BLength() bytes (one allocation). Like FastWrite, it cannot fail and
// does not validate v: a generated struct that is or holds a union has a
// Validate method reporting a union with several fields set (written as is,
// that is not a Thrift union); generated clients and handlers call it before
// sending, and callers of Marshal should.
func Marshal(v FastCodec) []byte {
	b := make([]byte, v.BLength())
	return b[:v.FastWrite(b)]
}

// Unmarshal decodes one struct from the start of b into v with the binary
// protocol. b should hold that struct only: bytes after it are ignored, but
// when v is a [WholeReader] (generated structs are) they are copied along
// with it. Use v.FastRead directly to learn how many bytes were consumed.
func Unmarshal(b []byte, v FastCodec) error {
	var err error
	if w, ok := v.(WholeReader); ok {
		_, err = w.FastReadWhole(b)
	} else {
		_, err = v.FastRead(b)
	}
	return err
}

// MarshalCompact encodes v with the compact protocol into a new slice of
// exactly v.BLengthCompact() bytes (one allocation).
func MarshalCompact(v CompactCodec) []byte {
	b := make([]byte, v.BLengthCompact())
	return b[:v.FastWriteCompact(b)]
}

// UnmarshalCompact decodes one struct from the start of b into v with the
// compact protocol, like [Unmarshal] (v's FastReadWholeCompact when it has
// one).
func UnmarshalCompact(b []byte, v CompactCodec) error {
	var err error
	if w, ok := v.(WholeCompactReader); ok {
		_, err = w.FastReadWholeCompact(b)
	} else {
		_, err = v.FastReadCompact(b)
	}
	return err
}
