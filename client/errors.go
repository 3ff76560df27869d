package client

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

var (
	// errClientClosed reports a call on a closed Client: a Connection
	// error that no retry can mend (rpcerr.Final) and that the circuit
	// breakers do not count (rpcerr.Abandoned).
	errClientClosed error = &closedError{abandonedError{rpcerr.New(rpcerr.Connection, "client: the client is closed")}}
	// errDrained is why a multiplexed connection closes after the server
	// asked to drop it.
	errDrained = errors.New("client: connection dropped at the server's request")
	// errRetry: a multiplexed connection takes no new calls; ask the pool
	// for another.
	errRetry = errors.New("client: connection is draining")
)

// closedError marks the failures of a closed client final: the retry
// middleware stops, where a Connection error not sent would be retried
// through its whole backoff schedule after Close. It marks them abandoned
// too: closing the client is the caller's own doing, and a breaker shared
// with another client of the service (WithCircuitBreaker's Group) must
// not open because Close ended the calls in flight.
type closedError struct{ abandonedError }

func (e *closedError) Final() bool { return true }

// abandonedError marks err as the client's own doing (rpcerr.Abandoned):
// the circuit breakers count it neither way.
type abandonedError struct{ err error }

func (e *abandonedError) Error() string       { return e.err.Error() }
func (e *abandonedError) Unwrap() error       { return e.err }
func (e *abandonedError) CallAbandoned() bool { return true }

// connError classifies why a connection failed: a transport error for bad
// bytes keeps its code (Protocol); anything else is a Connection error.
func connError(cause error, msg string) error {
	var e *rpcerr.Error
	if errors.As(cause, &e) && e.Code != rpcerr.Internal {
		if e.Code == rpcerr.Protocol || e.Code == rpcerr.Connection {
			return rpcerr.Wrap(e.Code, cause, msg)
		}
	}
	return rpcerr.Wrap(rpcerr.Connection, cause, msg)
}

// decodeReply decodes a reply message named name into result and turns what
// the server said into the error model:
//   - REPLY: result is filled (IDL-declared exceptions are in result's
//     fields; the generated stub returns them) and Call returns nil, or the
//     *rpcerr.BizStatusError the TTHeader carries; a reply named other than
//     the call's method is a Protocol error, as its fields are another
//     method's (an exception's name is not checked, as Kitex does not);
//   - EXCEPTION: an rpcerr Application error wrapping the
//     *thrift.ApplicationException (errors.As reaches it).
//
// method and addr, the call's method and server, only name them in errors.
func decodeReply(typ thrift.MessageType, name string, body []byte, result thrift.FastCodec, h *transport.Header, method, addr string) error {
	switch typ {
	case thrift.REPLY:
		if name != method {
			return rpcerr.New(rpcerr.Protocol, "the reply to the call of "+strconv.Quote(method)+" from "+addr+
				" is named "+strconv.Quote(name)+" (WRONG_METHOD_NAME)")
		}
		if result != nil {
			if err := readBody(body, result, h); err != nil {
				return rpcerr.Wrap(rpcerr.Protocol, err, "decoding the reply to the call of "+method+" from "+addr)
			}
		}
		if biz := bizStatus(h); biz != nil {
			return biz
		}
		return nil
	case thrift.EXCEPTION:
		ae := new(thrift.ApplicationException)
		if err := readBody(body, ae, h); err != nil {
			return rpcerr.Wrap(rpcerr.Protocol, err, "decoding the application exception answering the call of "+method+" from "+addr)
		}
		return rpcerr.Wrap(exceptionCode(ae), ae, "the server "+addr+" answered the call of "+method+" with an exception")
	}
	return rpcerr.New(rpcerr.Protocol, "the reply to the call of "+method+" from "+addr+" has message type "+
		strconv.Itoa(int(typ))+", want REPLY (2) or EXCEPTION (3)")
}

// notTheCallsReply reports whether a message that came under a call's
// sequence id is not that call's reply: another method's REPLY, or a
// message type other than REPLY and EXCEPTION (decodeReply's Protocol
// errors of WRONG_METHOD_NAME and of the message type).
func notTheCallsReply(typ thrift.MessageType, name, method string) bool {
	return (typ == thrift.REPLY && name != method) || (typ != thrift.REPLY && typ != thrift.EXCEPTION)
}

// isProtocolException reports whether err is a PROTOCOL_ERROR
// TApplicationException.
func isProtocolException(err error) bool {
	var ae *thrift.ApplicationException
	return errors.As(err, &ae) && ae.Type == thrift.ExceptionProtocolError
}

// exceptionCode classifies a TApplicationException: Application, unless it
// is a Petrel server's refusal (INTERNAL_ERROR whose message is the text of
// an rpcerr.Error: "petrel: overloaded: ...", "petrel: shutting_down: ...",
// "petrel: timeout: ..."), which keeps its code.
func exceptionCode(ae *thrift.ApplicationException) rpcerr.Code {
	if ae.Type == thrift.ExceptionInternalError {
		if code, ok := rpcerr.CodeFromMessage(ae.Message); ok {
			switch code {
			case rpcerr.Overloaded, rpcerr.ShuttingDown, rpcerr.Timeout:
				return code
			}
		}
	}
	return rpcerr.Application
}

// contextTimeout returns err, the call's error, wrapping
// context.DeadlineExceeded too when it is a Petrel server's timeout
// exception that the deadline of a context (the caller's, or a
// middleware's: deadline, the attempt's, earlier than the call's) ended,
// as timeoutError does when the client's timer sees that deadline first.
// The server's deadline is the one the client sent, the time left rounded
// down to whole milliseconds: its exception comes no earlier than a
// millisecond before the client's deadline. One coming earlier is the
// server's own timeout, and is left as it is. Error path only.
func contextTimeout(cs *callState, deadline time.Time, err error) error {
	if rpcerr.CodeOf(err) != rpcerr.Timeout || deadline.IsZero() || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	byContext := middlewareDeadline(cs, deadline) || cs.ctxDeadline
	var re *rpcerr.Error
	var ae *thrift.ApplicationException
	if !byContext || !errors.As(err, &re) || !errors.As(err, &ae) || time.Until(deadline) > time.Millisecond {
		return err
	}
	return rpcerr.Wrap(rpcerr.Timeout, contextTimeoutCause{ae}, re.Msg)
}

// contextTimeoutCause is a server's timeout exception that a context's
// deadline ended: errors.As reaches the exception, errors.Is
// context.DeadlineExceeded.
type contextTimeoutCause struct{ ae *thrift.ApplicationException }

func (e contextTimeoutCause) Error() string   { return e.ae.Error() }
func (e contextTimeoutCause) Unwrap() []error { return []error{e.ae, context.DeadlineExceeded} }

// readBody decodes body into v in the payload protocol of the frame.
func readBody(body []byte, v thrift.FastCodec, h *transport.Header) error {
	if h.PayloadProtocol == transport.PayloadCompact {
		cc, ok := v.(thrift.CompactCodec)
		if !ok {
			return errors.New("the reply is in the compact protocol and the result has no compact codec")
		}
		_, err := cc.FastReadCompact(body)
		return err
	}
	_, err := v.FastRead(body)
	return err
}

// bizStatus returns the business status a TTHeader reply carries, or nil.
// A status of 0 (or one that is not a number) is no error, as Kitex reads it.
func bizStatus(h *transport.Header) *rpcerr.BizStatusError {
	if len(h.StrInfo) == 0 {
		return nil
	}
	s, ok := h.StrInfo[transport.StrKeyBizStatus]
	if !ok {
		return nil
	}
	code, err := strconv.ParseInt(s, 10, 32)
	if err != nil || code == 0 {
		return nil
	}
	biz := rpcerr.NewBizStatusError(int32(code), h.StrInfo[transport.StrKeyBizMessage])
	if extra := h.StrInfo[transport.StrKeyBizExtra]; extra != "" {
		var m map[string]string
		if json.Unmarshal([]byte(extra), &m) == nil && len(m) > 0 {
			biz.Extra = m
		}
	}
	return biz
}

// serverAsksDrop reports whether a reply tells the client not to reuse the
// connection (the server is shutting down).
func serverAsksDrop(h *transport.Header) bool {
	if len(h.StrInfo) == 0 {
		return false
	}
	_, ok := h.StrInfo[transport.StrKeyConnReset]
	return ok
}
