package server

import (
	"errors"
	"fmt"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// Generated structs read strings and binaries by reference into a private
// copy of their input (FastRead = copy + FastReadDepth). The server makes
// that copy itself, inside the call's context allocation when the
// arguments are small, so one allocation serves both. The copy is never
// reused (the context is not pooled): strings a handler keeps stay valid.
type depthReader interface {
	FastReadDepth(b []byte, depth int) (int, error)
}

type depthReaderCompact interface {
	FastReadDepthCompact(b []byte, depth int) (int, error)
}

// Large arguments: generated structs' FastReadWhole copies the whole
// payload without first scanning for the struct's end.
type wholeReader interface {
	FastReadWhole(b []byte) (int, error)
}

type wholeReaderCompact interface {
	FastReadWholeCompact(b []byte) (int, error)
}

// Contexts with room for the arguments' bytes, by size.
type (
	callCtx512 struct {
		callCtx
		b [512]byte
	}
	callCtx1280 struct {
		callCtx
		b [1280]byte
	}
	callCtx2560 struct {
		callCtx
		b [2560]byte
	}
	callCtx4096 struct {
		callCtx
		b [4096]byte
	}
)

// newCallCtx returns a context with a private copy of body, or without one
// (nil) when body is over 4 KiB.
func newCallCtx(body []byte) (*callCtx, []byte) {
	n := len(body)
	var c *callCtx
	var b []byte
	switch {
	case n <= 512:
		x := new(callCtx512)
		c, b = &x.callCtx, x.b[:n]
	case n <= 1280:
		x := new(callCtx1280)
		c, b = &x.callCtx, x.b[:n]
	case n <= 2560:
		x := new(callCtx2560)
		c, b = &x.callCtx, x.b[:n]
	case n <= 4096:
		x := new(callCtx4096)
		c, b = &x.callCtx, x.b[:n]
	default:
		return new(callCtx), nil
	}
	copy(b, body)
	return c, b
}

var errNoCompact = errors.New("the argument struct has no compact codec")

// decodeArgs reads args from body (a view of the connection's input) and
// returns the call's context. A panic of the arguments' codec (a
// hand-written codec's bug) is returned as an error, so that the request
// is answered and gives back its place in flight; panicked reports it.
//
// A codec that calls runtime.Goexit ends the reader's goroutine (netpoll
// then closes the connection, which is how its client learns): handle
// never resumes, so the request's place in flight is given back here, and
// the panic counted, lest WithMaxInFlight's capacity and Stop's drain wait
// for it for good. A panic with nil under GODEBUG panicnil=1 (a go.mod
// before Go 1.21) looks the same to recover, which ends it without a
// value; handle then resumes with errArgsGoexit, which says that both are
// done.
func (s *Server) decodeArgs(args thrift.FastCodec, body []byte, payload uint8) (ctx *callCtx, panicked bool, err error) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			ctx, panicked, err = nil, true, fmt.Errorf("panic: %v", r)
		} else if !returned {
			s.lim.ReleaseRequest()
			s.stats.panics.Add(1)
			ctx, panicked, err = nil, true, errArgsGoexit
		}
	}()
	ctx, err = readArgs(args, body, payload)
	returned = true
	return ctx, false, err
}

// errArgsGoexit is decodeArgs's error when the arguments' codec panicked
// with nil or called runtime.Goexit; the request's place is given back.
var errArgsGoexit = errors.New("panic with a nil value, or runtime.Goexit")

func readArgs(args thrift.FastCodec, body []byte, payload uint8) (*callCtx, error) {
	if payload == transport.PayloadCompact {
		cc, ok := args.(thrift.CompactCodec)
		if !ok {
			return nil, errNoCompact
		}
		if dr, ok := args.(depthReaderCompact); ok && len(body) <= 4096 {
			ctx, b := newCallCtx(body)
			_, err := dr.FastReadDepthCompact(b, 1)
			return ctx, err
		}
		if wr, ok := args.(wholeReaderCompact); ok {
			_, err := wr.FastReadWholeCompact(body)
			return new(callCtx), err
		}
		_, err := cc.FastReadCompact(body)
		return new(callCtx), err
	}
	if dr, ok := args.(depthReader); ok && len(body) <= 4096 {
		ctx, b := newCallCtx(body)
		_, err := dr.FastReadDepth(b, 1)
		return ctx, err
	}
	if wr, ok := args.(wholeReader); ok {
		_, err := wr.FastReadWhole(body)
		return new(callCtx), err
	}
	_, err := args.FastRead(body)
	return new(callCtx), err
}
