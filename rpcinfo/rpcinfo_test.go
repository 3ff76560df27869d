package rpcinfo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/rpcinfo"
)

func TestContext(t *testing.T) {
	if rpcinfo.FromContext(context.Background()) != nil {
		t.Fatal("FromContext of an empty context is not nil")
	}
	ri := rpcinfo.Get()
	ri.Method, ri.SeqID = "Echo", 7
	ctx := context.WithValue(rpcinfo.NewContext(context.Background(), ri), struct{ x int }{}, 1)
	if got := rpcinfo.FromContext(ctx); got != ri {
		t.Fatalf("FromContext = %p, want %p", got, ri)
	}
	if v := ctx.Value(rpcinfo.ContextKey()); v != ri {
		t.Fatal("ContextKey is not the key NewContext uses")
	}
	rpcinfo.Put(ri)
	if ri.Method != "" || ri.SeqID != 0 {
		t.Fatal("Put did not clear the info")
	}
	got := rpcinfo.Get()
	if *got != (rpcinfo.RPCInfo{}) {
		t.Fatalf("Get returned a used info: %+v", *got)
	}
	rpcinfo.Put(got)
}

// ownCtx is a context type that carries an RPCInfo itself.
type ownCtx struct {
	context.Context
	ri rpcinfo.RPCInfo
}

func (c *ownCtx) Value(k any) any {
	if k == rpcinfo.ContextKey() {
		return &c.ri
	}
	return c.Context.Value(k)
}

func TestContextKeyForOwnContexts(t *testing.T) {
	c := &ownCtx{Context: context.Background()}
	c.ri.Callee = "svc"
	if ri := rpcinfo.FromContext(c); ri == nil || ri.Callee != "svc" {
		t.Fatalf("FromContext = %+v", ri)
	}
}

func ExampleFromContext() {
	ri := rpcinfo.Get()
	defer rpcinfo.Put(ri)
	ri.Callee, ri.Method, ri.Timeout = "echo", "Echo", 200*time.Millisecond
	ctx := rpcinfo.NewContext(context.Background(), ri)

	// In a middleware or handler:
	if info := rpcinfo.FromContext(ctx); info != nil {
		fmt.Println(info.Callee, info.Method, info.Timeout)
	}
	// Output: echo Echo 200ms
}
