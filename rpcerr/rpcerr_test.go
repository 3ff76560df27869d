package rpcerr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
)

func TestCodeString(t *testing.T) {
	want := map[rpcerr.Code]string{
		rpcerr.OK: "ok", rpcerr.Canceled: "canceled", rpcerr.Timeout: "timeout",
		rpcerr.Connection: "connection", rpcerr.Protocol: "protocol",
		rpcerr.Application: "application", rpcerr.Business: "business",
		rpcerr.Overloaded: "overloaded", rpcerr.ShuttingDown: "shutting_down",
		rpcerr.Internal: "internal", rpcerr.Declared: "declared",
		rpcerr.Code(99): "code_99",
	}
	for c, s := range want {
		if c.String() != s {
			t.Errorf("Code(%d).String() = %q, want %q", uint32(c), c.String(), s)
		}
	}
}

// declared stands for a generated IDL exception: a Thrift struct with Error.
type declared struct{ Why string }

func (d *declared) Error() string                  { return "declared: " + d.Why }
func (d *declared) BLength() int                   { return 1 }
func (d *declared) FastWrite(b []byte) int         { b[0] = 0; return 1 }
func (d *declared) FastRead(b []byte) (int, error) { return 1, nil }

func TestCodeOf(t *testing.T) {
	cases := []struct {
		err  error
		want rpcerr.Code
	}{
		{nil, rpcerr.OK},
		{rpcerr.New(rpcerr.Overloaded, "max QPS"), rpcerr.Overloaded},
		{fmt.Errorf("call: %w", rpcerr.Wrap(rpcerr.Connection, io.EOF, "read")), rpcerr.Connection},
		{rpcerr.NewBizStatusError(1001, "no stock"), rpcerr.Business},
		{context.Canceled, rpcerr.Canceled},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), rpcerr.Timeout},
		{os.ErrDeadlineExceeded, rpcerr.Timeout},
		{thrift.NewApplicationException(thrift.ExceptionUnknownMethod, "nope"), rpcerr.Application},
		{&declared{"bad"}, rpcerr.Declared},
		{errors.New("something"), rpcerr.Internal},
	}
	for _, c := range cases {
		if got := rpcerr.CodeOf(c.err); got != c.want {
			t.Errorf("CodeOf(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestErrorWrapsCause(t *testing.T) {
	err := rpcerr.Wrap(rpcerr.Connection, io.ErrUnexpectedEOF, "reading the reply")
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal("errors.Is does not reach the cause")
	}
	if got, want := err.Error(), "petrel: connection: reading the reply: unexpected EOF"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, &rpcerr.Error{Code: rpcerr.Connection}) {
		t.Fatal("a bare code does not match")
	}
	if errors.Is(err, &rpcerr.Error{Code: rpcerr.Timeout}) {
		t.Fatal("another code matches")
	}
	if errors.Is(err, rpcerr.New(rpcerr.Connection, "other message")) {
		t.Fatal("a target with a message matches")
	}
}

func TestTimeoutIsNetError(t *testing.T) {
	var ne net.Error
	if !errors.As(fmt.Errorf("x: %w", rpcerr.New(rpcerr.Timeout, "rpc timeout 1s")), &ne) {
		t.Fatal("not a net.Error")
	}
	if !ne.Timeout() || !ne.Temporary() {
		t.Fatalf("Timeout()=%v Temporary()=%v, want both true", ne.Timeout(), ne.Temporary())
	}
	p := rpcerr.New(rpcerr.Protocol, "bad frame")
	if p.Timeout() || p.Temporary() {
		t.Fatal("a protocol error claims to be a timeout or temporary")
	}
}

func TestBizStatusError(t *testing.T) {
	e := rpcerr.NewBizStatusError(42, "quota").SetExtra("k", "v")
	if e.Error() != "petrel: business status 42: quota" || e.Extra["k"] != "v" {
		t.Fatalf("got %q %v", e.Error(), e.Extra)
	}
	var b *rpcerr.BizStatusError
	if !errors.As(fmt.Errorf("w: %w", e), &b) || b.StatusCode != 42 {
		t.Fatal("errors.As does not find the status")
	}
}

func ExampleCodeOf() {
	err := fmt.Errorf("calling Echo: %w", rpcerr.New(rpcerr.Timeout, "no reply within 100ms"))
	fmt.Println(rpcerr.CodeOf(err))
	fmt.Println(err)
	var ne net.Error
	fmt.Println(errors.As(err, &ne) && ne.Timeout())
	// Output:
	// timeout
	// calling Echo: petrel: timeout: no reply within 100ms
	// true
}

func ExampleBizStatusError() {
	// A handler reports a business failure; over TTHeader the client gets it
	// back as a *BizStatusError.
	var err error = rpcerr.NewBizStatusError(1001, "out of stock")
	var biz *rpcerr.BizStatusError
	if errors.As(err, &biz) {
		fmt.Println(biz.StatusCode, biz.Message, rpcerr.CodeOf(err))
	}
	// Output: 1001 out of stock business
}

func TestCodeFromMessage(t *testing.T) {
	for _, c := range []rpcerr.Code{rpcerr.Overloaded, rpcerr.ShuttingDown, rpcerr.Timeout} {
		msg := rpcerr.New(c, "details: more").Error()
		if got, ok := rpcerr.CodeFromMessage(msg); !ok || got != c {
			t.Errorf("CodeFromMessage(%q) = %v %v", msg, got, ok)
		}
	}
	for _, msg := range []string{"", "boom", "petrel: overloadedX", "petrel: nonsense: x"} {
		if got, ok := rpcerr.CodeFromMessage(msg); ok || got != rpcerr.Internal {
			t.Errorf("CodeFromMessage(%q) = %v %v, want internal false", msg, got, ok)
		}
	}
}

// TestNilPointers: a nil *Error or *BizStatusError in an error (a function
// declared to return *rpcerr.Error that returns nil, assigned to error) is
// not nil, so the call failed; CodeOf classes it Internal (a bug, and no
// code or status to report) and no method panics.
func TestNilPointers(t *testing.T) {
	var e *rpcerr.Error
	var b *rpcerr.BizStatusError
	for _, err := range []error{e, b, fmt.Errorf("call: %w", e), fmt.Errorf("call: %w", b)} {
		if got := rpcerr.CodeOf(err); got != rpcerr.Internal {
			t.Errorf("CodeOf(%T) = %v, want internal", err, got)
		}
		if !strings.Contains(err.Error(), "nil *rpcerr.") {
			t.Errorf("%T: Error() = %q, want it to name the nil pointer", err, err.Error())
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, &rpcerr.Error{Code: rpcerr.Internal}) {
			t.Errorf("%T: errors.Is matches", err)
		}
	}
	if e.Unwrap() != nil || e.Timeout() || e.Temporary() {
		t.Error("a nil *Error has a cause or is a timeout or temporary")
	}
	var ne net.Error
	if !errors.As(error(e), &ne) || ne.Timeout() {
		t.Error("a nil *Error is a timeout")
	}
}
