package rpcerr_test

import (
	"fmt"
	"testing"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// wrapErr's methods read a field: a nil *wrapErr in an error panics when
// its chain is walked.
type wrapErr struct{ cause error }

func (e *wrapErr) Error() string { return "wrap: " + e.cause.Error() }
func (e *wrapErr) Unwrap() error { return e.cause }

// CodeOf never panics: an error whose Unwrap panics (a handler returning a
// nil *T whose Unwrap reads a field) is Internal, as the server answers
// such a call, for every caller of CodeOf (retry, breakers, tracers).
func TestCodeOfErrorWhoseMethodsPanic(t *testing.T) {
	for _, err := range []error{(*wrapErr)(nil), fmt.Errorf("calling: %w", (*wrapErr)(nil))} {
		var code rpcerr.Code
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("CodeOf(%T) panicked: %v", err, r)
				}
			}()
			code = rpcerr.CodeOf(err)
		}()
		if code != rpcerr.Internal {
			t.Errorf("CodeOf(%T) = %v, want Internal", err, code)
		}
	}
}
