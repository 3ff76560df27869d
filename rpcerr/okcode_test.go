package rpcerr_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestCodeOfErrorWithoutCode: an *Error built without a code
// (&rpcerr.Error{Msg: ...}, whose Code is the zero value OK) is still an
// error: CodeOf must not class it OK, which circuit breakers count as a
// success and metrics label "ok". It is Internal, as other errors without a
// code are.
func TestCodeOfErrorWithoutCode(t *testing.T) {
	for _, err := range []error{
		&rpcerr.Error{Msg: "the quota service refused"},
		fmt.Errorf("call: %w", rpcerr.New(rpcerr.OK, "x")),
	} {
		if got := rpcerr.CodeOf(err); got != rpcerr.Internal {
			t.Errorf("CodeOf(%v) = %v, want internal", err, got)
		}
	}
}

// TestCodeOfErrorWithoutCodeKeepsCause: such an *Error with a cause has the
// cause's code.
func TestCodeOfErrorWithoutCodeKeepsCause(t *testing.T) {
	err := &rpcerr.Error{Msg: "asking the quota service", Cause: rpcerr.New(rpcerr.Overloaded, "max QPS")}
	if got := rpcerr.CodeOf(err); got != rpcerr.Overloaded {
		t.Errorf("CodeOf(%v) = %v, want overloaded", err, got)
	}
}

// TestErrorWithoutCodeMethodsAgree: the methods of an *Error built without
// a code report the code CodeOf gives it, not OK: its text must not call the
// failure "ok", code written for net.Error must see the timeout of a
// deadline it wraps, and errors.Is with a bare code must match what CodeOf
// says.
func TestErrorWithoutCodeMethodsAgree(t *testing.T) {
	timeout := &rpcerr.Error{Msg: "asking the quota service", Cause: context.DeadlineExceeded}
	overloaded := &rpcerr.Error{Msg: "asking the quota service", Cause: rpcerr.New(rpcerr.Overloaded, "max QPS")}
	bare := &rpcerr.Error{Msg: "the quota service refused"}
	for _, tc := range []struct {
		err               *rpcerr.Error
		want              rpcerr.Code
		timeout, tempor   bool
		wantTextBeginning string
	}{
		{timeout, rpcerr.Timeout, true, true, "petrel: timeout: asking the quota service"},
		{overloaded, rpcerr.Overloaded, false, true, "petrel: overloaded: asking the quota service"},
		{bare, rpcerr.Internal, false, false, "petrel: internal: the quota service refused"},
	} {
		if got := rpcerr.CodeOf(tc.err); got != tc.want {
			t.Fatalf("CodeOf(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if got := tc.err.Error(); !strings.HasPrefix(got, tc.wantTextBeginning) {
			t.Errorf("Error() = %q, want it to begin %q", got, tc.wantTextBeginning)
		}
		var ne net.Error
		if !errors.As(fmt.Errorf("call: %w", tc.err), &ne) || ne.Timeout() != tc.timeout || ne.Temporary() != tc.tempor {
			t.Errorf("%v: Timeout() = %v, Temporary() = %v; want %v, %v", tc.err, tc.err.Timeout(), tc.err.Temporary(), tc.timeout, tc.tempor)
		}
		if !errors.Is(tc.err, &rpcerr.Error{Code: tc.want}) {
			t.Errorf("errors.Is(%v, code %v) = false, CodeOf says %v", tc.err, tc.want, tc.want)
		}
		if errors.Is(tc.err, &rpcerr.Error{Code: rpcerr.OK}) {
			t.Errorf("errors.Is(%v, code ok) = true", tc.err)
		}
	}
}
