package endpoint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/endpoint"
)

// TestChainKeepsItsMiddlewares: Chain(mws...) passes the caller's slice;
// changing it afterwards must not change the chain.
func TestChainKeepsItsMiddlewares(t *testing.T) {
	var trace []string
	mws := []endpoint.Middleware{tag("a", &trace)}
	chain := endpoint.Chain(mws...)
	mws[0] = tag("changed", &trace)
	_ = chain(func(ctx context.Context, req, resp any) error { return nil })(context.Background(), nil, nil)
	if got := strings.Join(trace, " "); got != "a> <a" {
		t.Fatalf("the chain ran %q, want \"a> <a\" (the middleware it was given)", got)
	}
}
