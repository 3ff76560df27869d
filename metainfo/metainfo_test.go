package metainfo_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/petrel-rpc/petrel/metainfo"
)

func TestTransientAndPersistent(t *testing.T) {
	base := context.Background()
	ctx := metainfo.WithValue(base, "k", "v1")
	ctx2 := metainfo.WithValue(ctx, "k", "v2")
	ctx2 = metainfo.WithPersistentValue(ctx2, "trace", "abc")
	if v, ok := metainfo.GetValue(ctx, "k"); !ok || v != "v1" {
		t.Fatalf("parent changed: %q %v", v, ok)
	}
	if v, _ := metainfo.GetValue(ctx2, "k"); v != "v2" {
		t.Fatalf("GetValue = %q, want v2", v)
	}
	if _, ok := metainfo.GetPersistentValue(ctx, "trace"); ok {
		t.Fatal("persistent value leaked to the parent")
	}
	if v, _ := metainfo.GetPersistentValue(ctx2, "trace"); v != "abc" {
		t.Fatalf("GetPersistentValue = %q", v)
	}
	if metainfo.WithValue(base, "", "x") != base || metainfo.WithPersistentValue(base, "x", "") != base {
		t.Fatal("empty key or value was stored")
	}
	d := metainfo.DelValue(ctx2, "k")
	if _, ok := metainfo.GetValue(d, "k"); ok {
		t.Fatal("DelValue kept the value")
	}
	d = metainfo.DelPersistentValue(d, "trace")
	if metainfo.HasValues(d) {
		t.Fatal("HasValues after deleting everything")
	}
	if metainfo.DelValue(base, "k") != base || metainfo.DelPersistentValue(ctx, "nope") != ctx {
		t.Fatal("deleting an absent key made a new context")
	}
}

func TestWireRoundTrip(t *testing.T) {
	// Client side: what goes into the TTHeader string block.
	ctx := metainfo.WithValue(context.Background(), "tenant", "t1")
	ctx = metainfo.WithPersistentValue(ctx, "trace", "abc")
	m := map[string]string{}
	metainfo.ToWire(ctx, m)
	want := map[string]string{"RPC_TRANSIT_tenant": "t1", "RPC_PERSIST_trace": "abc"}
	if !maps.Equal(m, want) {
		t.Fatalf("ToWire = %v, want %v", m, want)
	}

	// Server side: other keys and empty values are ignored.
	m["other"] = "x"
	m["RPC_TRANSIT_"] = "no name"
	m["RPC_PERSIST_empty"] = ""
	srv := metainfo.FromWire(context.Background(), m)
	if v, _ := metainfo.GetValue(srv, "tenant"); v != "t1" {
		t.Fatalf("server transient = %q", v)
	}
	if got := metainfo.GetAllValues(srv); !maps.Equal(got, map[string]string{"tenant": "t1"}) {
		t.Fatalf("GetAllValues = %v", got)
	}
	if got := metainfo.GetAllPersistentValues(srv); !maps.Equal(got, map[string]string{"trace": "abc"}) {
		t.Fatalf("GetAllPersistentValues = %v", got)
	}

	// The next hop: upstream transient values are not forwarded; persistent
	// ones are, and transient values set by this service are.
	next := metainfo.WithValue(srv, "stage", "2")
	m2 := map[string]string{}
	metainfo.ToWire(next, m2)
	want2 := map[string]string{"RPC_TRANSIT_stage": "2", "RPC_PERSIST_trace": "abc"}
	if !maps.Equal(m2, want2) {
		t.Fatalf("second hop = %v, want %v", m2, want2)
	}
	if base := context.Background(); metainfo.FromWire(base, map[string]string{"x": "y"}) != base {
		t.Fatal("FromWire without values made a new context")
	}
}

func Example() {
	// The caller sets values...
	ctx := metainfo.WithValue(context.Background(), "tenant", "blue")
	ctx = metainfo.WithPersistentValue(ctx, "trace-id", "7f3a")
	header := map[string]string{}
	metainfo.ToWire(ctx, header) // what the client puts in TTHeader

	// ...and the server's handler reads them.
	srv := metainfo.FromWire(context.Background(), header)
	tenant, _ := metainfo.GetValue(srv, "tenant")
	trace, _ := metainfo.GetPersistentValue(srv, "trace-id")
	fmt.Println(tenant, trace, header["RPC_TRANSIT_tenant"])
	// Output: blue 7f3a blue
}

// TestFromWireLinear: the string block of one TTHeader request (up to 64
// KiB) can hold thousands of keys; reading them takes a bounded number of
// allocations, not one copy of the values so far per key.
func TestFromWireLinear(t *testing.T) {
	m := make(map[string]string, 3000)
	for i := range 3000 {
		m[fmt.Sprintf("%s%d", metainfo.PrefixTransient, i)] = "v"
		m[fmt.Sprintf("%s%d", metainfo.PrefixPersistent, i)] = "v"
	}
	var ctx context.Context
	allocs := testing.AllocsPerRun(3, func() { ctx = metainfo.FromWire(context.Background(), m) })
	if allocs > 100 { // the slices grow by doubling: a few dozen
		t.Errorf("FromWire of %d keys: %v allocations", len(m), allocs)
	}
	if got := len(metainfo.GetAllValues(ctx)); got != 3000 {
		t.Errorf("%d transient values, want 3000", got)
	}
	if got := len(metainfo.GetAllPersistentValues(ctx)); got != 3000 {
		t.Errorf("%d persistent values, want 3000", got)
	}
	// Values received over ones the context already carries replace them.
	base := metainfo.WithPersistentValue(context.Background(), "0", "old")
	base = metainfo.WithPersistentValue(base, "kept", "k")
	ctx = metainfo.FromWire(base, m)
	if v, _ := metainfo.GetPersistentValue(ctx, "0"); v != "v" {
		t.Errorf("received value %q, want v over the context's old", v)
	}
	if v, _ := metainfo.GetPersistentValue(ctx, "kept"); v != "k" || len(metainfo.GetAllPersistentValues(ctx)) != 3001 {
		t.Errorf("the context's own value %q, %d values; want k, 3001", v, len(metainfo.GetAllPersistentValues(ctx)))
	}
}
