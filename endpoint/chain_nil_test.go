package endpoint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// call runs ep and turns a panic into a test failure naming what.
func call(t *testing.T, what string, ep endpoint.Endpoint) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: calling the chained endpoint panicked: %v", what, r)
		}
	}()
	if ep == nil {
		t.Fatalf("%s: Chain returned a nil Endpoint", what)
	}
	return ep(context.Background(), nil, nil)
}

// TestChainNilEndpoints: a middleware that returns a nil Endpoint (a
// "disabled" middleware written as `return nil`), or a chain applied to a nil
// Endpoint, makes every call fail with an Internal error that says which,
// instead of a nil-function panic on the call's goroutine.
func TestChainNilEndpoints(t *testing.T) {
	handler := func(ctx context.Context, req, resp any) error { return nil }
	var trace []string
	returnsNil := func(next endpoint.Endpoint) endpoint.Endpoint { return nil }

	err := call(t, "middleware returning nil", endpoint.Chain(tag("a", &trace), returnsNil)(handler))
	if rpcerr.CodeOf(err) != rpcerr.Internal || !strings.Contains(err.Error(), "middleware 2 of 2") ||
		!strings.Contains(err.Error(), "nil Endpoint") {
		t.Fatalf("middleware returning nil: err = %v, want an internal error naming middleware 2 of 2", err)
	}
	if got := strings.Join(trace, " "); got != "a> <a" {
		t.Fatalf("the outer middleware ran as %q, want \"a> <a\"", got)
	}

	err = call(t, "outermost middleware returning nil", endpoint.Chain(returnsNil)(handler))
	if rpcerr.CodeOf(err) != rpcerr.Internal || !strings.Contains(err.Error(), "middleware 1 of 1") {
		t.Fatalf("outermost middleware returning nil: err = %v", err)
	}

	for _, c := range []endpoint.Middleware{endpoint.Chain(), endpoint.Chain(tag("b", &trace)), endpoint.Chain(nil)} {
		err = call(t, "nil endpoint", c(nil))
		if rpcerr.CodeOf(err) != rpcerr.Internal || !strings.Contains(err.Error(), "nil Endpoint") {
			t.Fatalf("chain applied to a nil Endpoint: err = %v", err)
		}
	}
}
