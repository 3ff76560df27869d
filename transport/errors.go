package transport

import (
	"errors"
	"fmt"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// The kinds of transport error. Every error this package builds for bad bytes
// is an *rpcerr.Error with code rpcerr.Protocol whose cause is one of these,
// so both rpcerr.CodeOf(err) == rpcerr.Protocol and errors.Is(err,
// ErrFrameTooLarge) work. Errors of the underlying reader or writer (a closed
// connection, buf.ErrNotEnough from a LinkBuffer that holds part of a frame)
// are returned unchanged.
var (
	// ErrNeedMore: Detect was given too few bytes to decide.
	ErrNeedMore = errors.New("transport: need more bytes")
	// ErrUnknownProtocol: the first bytes match no protocol Petrel speaks.
	ErrUnknownProtocol = errors.New("transport: unknown protocol")
	// ErrFrameTooLarge: a frame (or a Buffered message) declares more bytes
	// than the size limit allows.
	ErrFrameTooLarge = errors.New("transport: frame too large")
	// ErrBadFrame: the frame's own bytes are inconsistent (a header larger
	// than its frame, a string past its header, an unknown info id).
	ErrBadFrame = errors.New("transport: malformed frame")
	// ErrBadMessage: the Thrift message inside the frame is malformed.
	ErrBadMessage = errors.New("transport: malformed message")
	// ErrUnsupported: valid bytes asking for something Petrel does not do
	// (TTHeader transforms, an unknown payload protocol, Apache THeader).
	ErrUnsupported = errors.New("transport: unsupported")
	// ErrHeaderTooLarge: a Header cannot be encoded (a string over 65535
	// bytes, more than MaxInfoEntries key/value entries, a header over
	// MaxHeaderSize).
	ErrHeaderTooLarge = errors.New("transport: header too large")
)

// protoErr returns a Protocol error of kind kind with a formatted message.
func protoErr(kind error, format string, args ...any) error {
	return &rpcerr.Error{Code: rpcerr.Protocol, Msg: fmt.Sprintf(format, args...), Cause: kind}
}

// wrapProto returns a Protocol error of kind kind that also carries cause
// (a codec/thrift error) in its message chain.
func wrapProto(kind error, cause error, msg string) error {
	return &rpcerr.Error{Code: rpcerr.Protocol, Msg: msg, Cause: &kindError{kind: kind, cause: cause}}
}

// kindError joins a transport kind and the codec error that caused it, so
// errors.Is finds both.
type kindError struct {
	kind  error
	cause error
}

func (e *kindError) Error() string   { return e.kind.Error() + ": " + e.cause.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.cause} }
