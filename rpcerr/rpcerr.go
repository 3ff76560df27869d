// Package rpcerr is Petrel's one error model for RPC calls.
//
// Every error the client and server return is classified by a closed [Code]:
// [CodeOf] gives the code of any error, and the [*Error] type carries a code,
// a message and the cause it wraps (reachable with errors.Is / errors.As).
// Business failures that the server reports on purpose travel as
// [*BizStatusError]; exceptions declared in the IDL reach the caller as their
// own generated Go types and have the code [Declared].
//
// An [*Error] with code [Timeout] satisfies net.Error with Timeout() true, so
// code written for net.Conn errors recognises RPC timeouts too.
//
// This package imports nothing from Petrel; every other RPC package builds its
// errors from it.
package rpcerr

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// Code classifies an RPC error. The set is closed: new codes are added only by
// Petrel, and [Code.String] names each one.
type Code uint32

// The codes, in the order a call can fail.
const (
	// OK means no error (CodeOf(nil)).
	OK Code = iota
	// Canceled: the caller's context was canceled.
	Canceled
	// Timeout: a deadline passed, on the client or on the server.
	Timeout
	// Connection: dialing failed, the connection was closed or reset, or a
	// write failed.
	Connection
	// Protocol: bad frame or message bytes, a size limit, an unknown protocol.
	Protocol
	// Application: the peer answered with a Thrift TApplicationException
	// (UNKNOWN_METHOD, INTERNAL_ERROR, ...).
	Application
	// Business: the handler reported a business status ([*BizStatusError]),
	// carried in TTHeader.
	Business
	// Overloaded: a server limit (QPS, in-flight requests) rejected the
	// request at once. (A connection over a server's connection limit is
	// closed unanswered: its calls fail with Connection.)
	Overloaded
	// ShuttingDown: the server is stopping and rejected the request.
	ShuttingDown
	// Internal: a bug or a panic inside Petrel or inside the handler.
	Internal
	// Declared: an exception declared in the IDL (`throws`), returned as its
	// generated Go type.
	Declared

	numCodes
)

var codeNames = [numCodes]string{
	"ok", "canceled", "timeout", "connection", "protocol", "application",
	"business", "overloaded", "shutting_down", "internal", "declared",
}

// String returns the code's name in lower case ("timeout", "shutting_down"),
// or "code_N" for a value outside the enum.
func (c Code) String() string {
	if c < numCodes {
		return codeNames[c]
	}
	return "code_" + strconv.FormatUint(uint64(c), 10)
}

// Error is an RPC error: a code, a message saying what went wrong, and an
// optional cause.
//
// Two *Error values match with errors.Is when the target has only a Code
// (no Msg, no Cause): errors.Is(err, &rpcerr.Error{Code: rpcerr.Timeout}).
//
// A nil *Error in an error (a function declared to return *Error that
// returns nil, assigned to error) is not a nil error: it is a bug, which
// [CodeOf] classes [Internal]; its methods do not panic.
type Error struct {
	Code  Code
	Msg   string
	Cause error
}

// New returns an error with code and msg.
func New(code Code, msg string) *Error { return &Error{Code: code, Msg: msg} }

// Wrap returns an error with code and msg that wraps cause.
func Wrap(code Code, cause error, msg string) *Error {
	return &Error{Code: code, Msg: msg, Cause: cause}
}

// Error returns "petrel: CODE: msg: cause", leaving out empty parts, or
// "petrel: internal: nil *rpcerr.Error" for a nil e. CODE, and the code
// Is, Timeout and Temporary go by, is the one CodeOf gives e: for an
// *Error built without a code, its cause's code or internal, never ok.
func (e *Error) Error() string {
	if e == nil {
		return "petrel: internal: nil *rpcerr.Error"
	}
	s := "petrel: " + e.code().String()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// code returns the code CodeOf gives e (not nil): its Code, or for an
// *Error built without one (Code OK) its cause's code, or Internal.
func (e *Error) code() Code {
	if e.Code != OK {
		return e.Code
	}
	if c := CodeOf(e.Cause); c != OK {
		return c
	}
	return Internal
}

// Unwrap returns the cause (nil for a nil e).
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Cause
}

// Is reports whether target is an *Error with the same code and neither a
// message nor a cause, so a bare &Error{Code: c} matches every error of code c.
// A nil e, which has no code, matches no such target.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e != nil && t != nil && t.Msg == "" && t.Cause == nil && t.Code == e.code()
}

// Timeout reports whether the code is [Timeout] (net.Error).
func (e *Error) Timeout() bool { return e != nil && e.code() == Timeout }

// Temporary reports whether retrying later may succeed: true for [Timeout],
// [Overloaded] and [ShuttingDown] (net.Error).
func (e *Error) Temporary() bool {
	if e == nil {
		return false
	}
	c := e.code()
	return c == Timeout || c == Overloaded || c == ShuttingDown
}

var _ net.Error = (*Error)(nil)

// BizStatusError is a business status the handler returns on purpose: a
// status code, a message and optional extra key-values. Over TTHeader it
// travels in the header's string keys biz-status, biz-message and biz-extra
// next to a normal reply, as Kitex does (a Petrel server cuts a message
// over 16 KiB and leaves out an extra over 16 KiB as JSON, so that the
// header fits and the status code arrives);
// over protocols without a header the server sends it as an
// ApplicationException. A nil *BizStatusError in an error carries no status:
// [CodeOf] classes it [Internal], as a nil [*Error].
type BizStatusError struct {
	StatusCode int32
	Message    string
	Extra      map[string]string
}

// NewBizStatusError returns a business status error.
func NewBizStatusError(code int32, msg string) *BizStatusError {
	return &BizStatusError{StatusCode: code, Message: msg}
}

// Error returns "petrel: business status CODE: message", or
// "petrel: internal: nil *rpcerr.BizStatusError" for a nil e.
func (e *BizStatusError) Error() string {
	if e == nil {
		return "petrel: internal: nil *rpcerr.BizStatusError"
	}
	s := "petrel: business status " + strconv.FormatInt(int64(e.StatusCode), 10)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// SetExtra sets one extra key-value and returns e.
func (e *BizStatusError) SetExtra(k, v string) *BizStatusError {
	if e.Extra == nil {
		e.Extra = make(map[string]string, 1)
	}
	e.Extra[k] = v
	return e
}

// applicationException is how CodeOf recognises codec/thrift's
// ApplicationException without importing it: a Thrift struct (FastRead)
// with a TypeName method. Generated code never declares a method named
// TypeName (its accessors are GetX/SetX/IsSetX).
type applicationException interface {
	TypeName() string
	FastRead(b []byte) (int, error)
}

// thriftStruct is any Thrift struct: an error that also is one is an
// exception declared in the IDL (generated code gives every exception an
// Error method and a FastRead method).
type thriftStruct interface {
	BLength() int
	FastRead(b []byte) (int, error)
}

// NotSent reports whether err says that the request was not sent: an error
// in its chain has the method RequestNotSent() returning true. The client
// marks that way the failures that happen before any byte of the request is
// written (no address, a failed dial, an encoding error); retry retries
// them even for a method that is not idempotent, and the circuit breakers
// count them neither way.
func NotSent(err error) bool {
	var ns interface{ RequestNotSent() bool }
	return errors.As(err, &ns) && ns.RequestNotSent()
}

// Final reports whether err says that no later attempt of the call can
// succeed: the first error in its chain with a method Final() bool
// returns true.
// The client marks so the failures of a call on a closed client; retry
// never retries them, whatever its policy.
func Final(err error) bool {
	var f interface{ Final() bool }
	return errors.As(err, &f) && f.Final()
}

// Abandoned reports whether err says that the call was ended by its own
// client, not failed by the server or the network: an error in its chain
// has the method CallAbandoned() bool returning true. The client marks so
// the calls its Close ends (and the calls made after it); the circuit
// breakers count them neither way, as they do a canceled call.
func Abandoned(err error) bool {
	var a interface{ CallAbandoned() bool }
	return errors.As(err, &a) && a.CallAbandoned()
}

// CodeOf returns the code of err:
//   - OK for nil;
//   - the Code of the first [*Error] in err's chain ([Internal] if that is
//     a nil *Error; for one whose Code is OK, as in &Error{Msg: m}, the
//     code of its cause, or [Internal] if it has none);
//   - [Business] for a [*BizStatusError] ([Internal] for a nil one);
//   - [Canceled] for context.Canceled, [Timeout] for context.DeadlineExceeded
//     and for any net.Error whose Timeout() is true;
//   - [Connection] for any other network error: a *net.OpError (a dial,
//     read or write that failed), net.ErrClosed, or a connection refused,
//     reset or aborted, or a broken pipe;
//   - [Application] for a Thrift ApplicationException;
//   - [Declared] for an IDL-declared exception (any other error that is a
//     generated Thrift struct);
//   - [Internal] for anything else, and for an error whose methods panic
//     while its chain is walked.
func CodeOf(err error) (code Code) {
	if err == nil {
		return OK
	}
	// An error whose methods panic (a nil *T whose Unwrap or As reads a
	// field, as a handler may return) is Internal, as the server answers
	// it: no caller of CodeOf (retry, breakers, tracers) has to guard it.
	defer func() {
		if recover() != nil {
			code = Internal
		}
	}()
	var e *Error
	if errors.As(err, &e) {
		if e == nil {
			return Internal
		}
		// An *Error built without a code is still an error.
		return e.code()
	}
	var b *BizStatusError
	if errors.As(err, &b) {
		if b == nil {
			return Internal
		}
		return Business
	}
	if errors.Is(err, context.Canceled) {
		return Canceled
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	if isNetworkError(err) {
		return Connection
	}
	var ae applicationException
	if errors.As(err, &ae) {
		return Application
	}
	var ts thriftStruct
	if errors.As(err, &ts) {
		return Declared
	}
	return Internal
}

// isNetworkError reports whether err is a network failure from the standard
// library (a middleware's or handler's own connection, passed on as it came).
func isNetworkError(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE)
}

// CodeFromMessage recognises the text of an [*Error] in a message a peer
// sent, such as the message of the ApplicationException a Petrel server
// answers with when it rejects a request ("petrel: overloaded: ...",
// "petrel: shutting_down: ..."). It returns the code named after "petrel: "
// and true, or (Internal, false) for any other text.
func CodeFromMessage(msg string) (Code, bool) {
	const prefix = "petrel: "
	if !strings.HasPrefix(msg, prefix) {
		return Internal, false
	}
	rest := msg[len(prefix):]
	for c := Code(0); c < numCodes; c++ {
		name := codeNames[c]
		if strings.HasPrefix(rest, name) && (len(rest) == len(name) || rest[len(name)] == ':') {
			return c, true
		}
	}
	return Internal, false
}
