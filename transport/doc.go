// Package transport frames Thrift messages on a byte stream: Framed (a 4-byte
// length), Buffered (no framing; the message's end is found by walking it)
// and TTHeader (CloudWeGo's header transport, wire-compatible with Kitex),
// with protocol detection from a connection's first bytes and the message
// layer (Thrift message header, sequence ids) on top.
//
// It is used by Petrel's client and server; users need it only to speak to a
// peer by hand. The formats are described byte by byte in
// docs/spec/ttheader.md and docs/spec/framed.md.
//
// # API
//
//	type Protocol uint8 // Framed, Buffered, TTHeader
//	func Detect(peek []byte) (Protocol, error)        // ErrNeedMore below DetectLen bytes
//	func DetectReader(r buf.Reader) (Protocol, error) // Peek + Detect
//
//	type Header struct { Protocol; SeqID int32; Flags uint16; PayloadProtocol uint8;
//	                     IntInfo map[uint16]string; StrInfo map[string]string; ACLToken string }
//	func (h *Header) Reset()
//
//	func ReadFrame(r buf.Reader, p Protocol, maxSize int, h *Header) (payload []byte, err error)
//	func BeginFrame(w buf.Writer, p Protocol, h *Header, payloadLen int) (payload []byte, err error)
//	func DecodeTTHeader(b []byte, maxSize int, h *Header) (payload []byte, n int, err error)
//
//	func WriteMessage(w buf.Writer, p Protocol, h *Header, name string,
//	                  typ thrift.MessageType, seq int32, body thrift.FastCodec) error
//	func ReadMessage(r buf.Reader, p Protocol, maxSize int, h *Header) (name string,
//	                  typ thrift.MessageType, seq int32, body []byte, err error)
//
// Key* and StrKey* name the TTHeader info keys Kitex uses (method, caller and
// callee, RPC timeout, business status, connection reset); Flag* its FLAGS
// bits; PayloadBinary and PayloadCompact its protocol ids. ReadMessageHead
// reads a message's header without its body. Errors: ErrNeedMore (Detect
// and ReadMessageHead, unwrapped), and as causes of *rpcerr.Error with code
// Protocol: ErrUnknownProtocol, ErrFrameTooLarge, ErrBadFrame, ErrBadMessage,
// ErrUnsupported, ErrHeaderTooLarge.
//
// # Memory
//
// ReadFrame and ReadMessage return views of the reader's memory, valid until
// the reader's Release; ReadMessage's method name is such a view too. The
// strings in a decoded Header are ordinary strings and outlive the frame: a
// Header reused across frames (one per connection) reuses the strings of
// equal values from earlier frames, and otherwise makes one allocation per
// frame for all its new strings. Writing reserves each frame with one
// Malloc and encodes the message straight into it; large strings and
// binaries of generated structs are linked, not copied.
//
// Writing and reading back a 1 KiB message costs no allocation in Framed,
// Buffered and TTHeader, also with Kitex's usual header keys, and one when a
// header value changes with every call (a log id); see BenchmarkEcho1KB.
//
// # Limits
//
// Every size is checked before memory is reserved for it: a frame's length
// against maxSize, a TTHeader header's size against its frame and
// MaxHeaderSize, its counts and string lengths against the header's own
// bytes, a Buffered message's declared sizes against maxSize and
// codec/thrift's limits. Bad bytes never panic; they give an *rpcerr.Error
// with code rpcerr.Protocol (errors.Is finds ErrFrameTooLarge, ErrBadFrame,
// ErrBadMessage, ErrUnsupported). RefusedFrameOf tells, for a TTHeader
// frame refused for its header, how a reply to it can be addressed.
package transport
