package rpcerr_test

import (
	"fmt"
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
