package thrift

import (
	"errors"
	"fmt"
	"io"
)

// ErrorKind classifies a [ProtocolError].
type ErrorKind int

// The error kinds.
const (
	// UnexpectedEOF: the input ends before the value it declares (a short
	// buffer, or a size that does not fit in the bytes left).
	UnexpectedEOF ErrorKind = iota + 1
	// InvalidData: bytes that no valid encoder produces (unknown type tag,
	// overlong varint, out-of-range value).
	InvalidData
	// NegativeSize: a string, binary or container declares a negative size.
	NegativeSize
	// SizeLimit: a declared size exceeds [Limits].
	SizeLimit
	// DepthLimit: structs and containers nest deeper than allowed.
	DepthLimit
	// BadVersion: a message header with an unknown protocol id or version.
	BadVersion
	// NotImplemented: a feature this codec does not support.
	NotImplemented
)

// String returns the kind's name.
func (k ErrorKind) String() string {
	switch k {
	case UnexpectedEOF:
		return "unexpected EOF"
	case InvalidData:
		return "invalid data"
	case NegativeSize:
		return "negative size"
	case SizeLimit:
		return "size limit exceeded"
	case DepthLimit:
		return "depth limit exceeded"
	case BadVersion:
		return "bad version"
	case NotImplemented:
		return "not implemented"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// ProtocolError is the one error type readers return.
type ProtocolError struct {
	Kind ErrorKind
	Msg  string // what was wrong; empty in the sentinels
}

// Error returns "thrift: " and the message.
func (e *ProtocolError) Error() string {
	if e.Msg == "" {
		return "thrift: " + e.Kind.String()
	}
	return "thrift: " + e.Msg
}

// Is makes errors.Is(err, ErrSizeLimit) and the like match any
// ProtocolError of the same kind.
func (e *ProtocolError) Is(target error) bool {
	t, ok := target.(*ProtocolError)
	return ok && t.Msg == "" && t.Kind == e.Kind
}

// Unwrap returns io.ErrUnexpectedEOF for the UnexpectedEOF kind, so code that
// checks for it keeps working, and nil otherwise.
func (e *ProtocolError) Unwrap() error {
	if e.Kind == UnexpectedEOF {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// Sentinels for errors.Is, one per kind.
var (
	ErrUnexpectedEOF  = &ProtocolError{Kind: UnexpectedEOF}
	ErrShortBuffer    = ErrUnexpectedEOF // another name for ErrUnexpectedEOF
	ErrInvalidData    = &ProtocolError{Kind: InvalidData}
	ErrNegativeSize   = &ProtocolError{Kind: NegativeSize}
	ErrSizeLimit      = &ProtocolError{Kind: SizeLimit}
	ErrDepthLimit     = &ProtocolError{Kind: DepthLimit}
	ErrBadVersion     = &ProtocolError{Kind: BadVersion}
	ErrNotImplemented = &ProtocolError{Kind: NotImplemented}
)

// KindOf returns the kind of the first *ProtocolError in err's chain, or 0.
func KindOf(err error) ErrorKind {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return 0
}

func newError(k ErrorKind, format string, args ...any) error {
	return &ProtocolError{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// errShort reports that what needs need bytes but only have are left.
func errShort(what string, need, have int) error {
	return newError(UnexpectedEOF, "%s needs %d bytes but only %d left", what, need, have)
}

// errSize explains why a declared string/binary size n was rejected, given
// the bytes left after its length prefix.
func errSize(what string, n int64, left int) error {
	max := maxStringSize.Load()
	switch {
	case n < 0:
		return newError(NegativeSize, "%s size %d is negative", what, n)
	case n > max:
		return newError(SizeLimit, "%s of %d bytes exceeds the limit of %d", what, n, max)
	default:
		return newError(UnexpectedEOF, "%s of %d bytes declared but only %d bytes left", what, n, left)
	}
}

// errContainer explains why a declared container size n was rejected; min is
// the smallest wire size of one element (0 if the element type is unknown).
func errContainer(what string, n int64, min int, left int, elem string) error {
	max := maxContainerSize.Load()
	switch {
	case n < 0:
		return newError(NegativeSize, "%s size %d is negative", what, n)
	case n > max:
		return newError(SizeLimit, "%s of %d elements exceeds the limit of %d", what, n, max)
	case min == 0:
		return newError(InvalidData, "%s has unknown element type %s", what, elem)
	default:
		return newError(UnexpectedEOF, "%s of %d elements declared but only %d bytes left", what, n, left)
	}
}

// withOffset returns err with " at byte off" appended when it is a
// *ProtocolError, so Skip errors say where they happened.
func withOffset(err error, off int) error {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return &ProtocolError{Kind: pe.Kind, Msg: fmt.Sprintf("%s (at byte %d)", pe.Msg, off)}
	}
	return err
}
