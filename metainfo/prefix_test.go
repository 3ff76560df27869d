package metainfo_test

import (
	"context"
	"maps"
	"testing"

	"github.com/petrel-rpc/petrel/metainfo"
)

// TestPrefixedKeysRoundTrip: keys that themselves start with a wire prefix
// (or with the rest of Kitex's RPC_TRANSIT_UPSTREAM_) reach the server under
// the name the caller gave them, with their kind, and transient ones still
// travel one hop only.
func TestPrefixedKeysRoundTrip(t *testing.T) {
	ctx := context.Background()
	ctx = metainfo.WithValue(ctx, "UPSTREAM_region", "eu")
	ctx = metainfo.WithValue(ctx, "RPC_TRANSIT_a", "1")
	ctx = metainfo.WithValue(ctx, "RPC_PERSIST_b", "2")
	ctx = metainfo.WithPersistentValue(ctx, "RPC_TRANSIT_c", "3")
	ctx = metainfo.WithPersistentValue(ctx, "UPSTREAM_d", "4")
	m := map[string]string{}
	metainfo.ToWire(ctx, m)
	srv := metainfo.FromWire(context.Background(), m)

	wantT := map[string]string{"UPSTREAM_region": "eu", "RPC_TRANSIT_a": "1", "RPC_PERSIST_b": "2"}
	if got := metainfo.GetAllValues(srv); !maps.Equal(got, wantT) {
		t.Errorf("server transient values = %v, want %v (wire %v)", got, wantT, m)
	}
	if v, ok := metainfo.GetValue(srv, "UPSTREAM_region"); !ok || v != "eu" {
		t.Errorf("GetValue(UPSTREAM_region) = %q, %v; want eu", v, ok)
	}
	wantP := map[string]string{"RPC_TRANSIT_c": "3", "UPSTREAM_d": "4"}
	if got := metainfo.GetAllPersistentValues(srv); !maps.Equal(got, wantP) {
		t.Errorf("server persistent values = %v, want %v", got, wantP)
	}
	next := map[string]string{}
	metainfo.ToWire(srv, next)
	wantNext := map[string]string{"RPC_PERSIST_RPC_TRANSIT_c": "3", "RPC_PERSIST_UPSTREAM_d": "4"}
	if !maps.Equal(next, wantNext) {
		t.Errorf("next hop = %v, want %v (received transient values forwarded?)", next, wantNext)
	}
}
