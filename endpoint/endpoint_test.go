package endpoint_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/endpoint"
)

func tag(name string, trace *[]string) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			*trace = append(*trace, name+">")
			err := next(ctx, req, resp)
			*trace = append(*trace, "<"+name)
			return err
		}
	}
}

func TestChainOrder(t *testing.T) {
	var trace []string
	boom := errors.New("boom")
	ep := endpoint.Chain(tag("a", &trace), nil, tag("b", &trace))(func(ctx context.Context, req, resp any) error {
		trace = append(trace, "handler")
		return boom
	})
	if err := ep(context.Background(), nil, nil); err != boom {
		t.Fatalf("err = %v, want the handler's", err)
	}
	if got := strings.Join(trace, " "); got != "a> b> handler <b <a" {
		t.Fatalf("order = %q", got)
	}
}

func TestChainEmpty(t *testing.T) {
	called := false
	ep := endpoint.Chain()(func(ctx context.Context, req, resp any) error { called = true; return nil })
	if err := ep(context.Background(), nil, nil); err != nil || !called {
		t.Fatal("the identity chain did not call the endpoint")
	}
}

func ExampleChain() {
	logging := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			fmt.Println("before", req)
			err := next(ctx, req, resp)
			fmt.Println("after", err)
			return err
		}
	}
	handler := func(ctx context.Context, req, resp any) error {
		*resp.(*string) = "hello " + req.(string)
		return nil
	}
	var out string
	_ = endpoint.Chain(logging)(handler)(context.Background(), "petrel", &out)
	fmt.Println(out)
	// Output:
	// before petrel
	// after <nil>
	// hello petrel
}
