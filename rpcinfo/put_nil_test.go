package rpcinfo_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/rpcinfo"
)

// TestPutNil: Put(FromContext(ctx)) on a context that carries no RPCInfo
// (FromContext returns nil) does nothing, as sync.Pool.Put(nil) does,
// instead of panicking.
func TestPutNil(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Put(nil) panicked: %v", r)
		}
	}()
	rpcinfo.Put(rpcinfo.FromContext(context.Background()))
	if ri := rpcinfo.Get(); ri == nil {
		t.Fatal("Get returned nil after Put(nil)")
	} else {
		rpcinfo.Put(ri)
	}
}
