package interop_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/metainfo"
)

type aclHandler struct {
	*petrelHandler
	got chan string
}

func (h *aclHandler) Add(ctx context.Context, a int32, b int64) (int64, error) {
	v, _ := metainfo.GetValue(ctx, "gdpr-token")
	h.got <- v
	return h.petrelHandler.Add(ctx, a, b)
}

// TestKitexACLTokenReachesHandler: a Kitex client sends the transient
// metainfo value "gdpr-token" as the INFO_ACL_TOKEN block (gopkg's
// writeKVInfo); Kitex servers read it back into the string map under
// RPC_TRANSIT_gdpr-token, so the handler reads it with
// metainfo.GetValue(ctx, "gdpr-token").
func TestKitexACLTokenReachesHandler(t *testing.T) {
	h := &aclHandler{petrelHandler: newPetrelHandler(), got: make(chan string, 1)}
	addr := startPetrel(t, h)
	rawExchange(t, addr, kitexAddRequest(false))
	if v := <-h.got; v != "tk" {
		t.Fatalf("the handler read gdpr-token %q, want %q (sent as INFO_ACL_TOKEN)", v, "tk")
	}
}
