package metainfo_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/metainfo"
)

// TestNilContext: a nil context carries no values. Reading from it finds
// nothing, and adding to it keeps the value (on an empty context) instead of
// panicking.
func TestNilContext(t *testing.T) {
	var nilCtx context.Context // the misuse under test
	if v, ok := metainfo.GetValue(nilCtx, "k"); ok || v != "" {
		t.Fatalf("GetValue(nil) = %q, %v", v, ok)
	}
	if v, ok := metainfo.GetPersistentValue(nilCtx, "k"); ok || v != "" {
		t.Fatalf("GetPersistentValue(nil) = %q, %v", v, ok)
	}
	if metainfo.GetAllValues(nilCtx) != nil || metainfo.GetAllPersistentValues(nilCtx) != nil || metainfo.HasValues(nilCtx) {
		t.Fatal("a nil context reports values")
	}
	if metainfo.DelValue(nilCtx, "k") != nil || metainfo.DelPersistentValue(nilCtx, "k") != nil {
		t.Fatal("deleting from a nil context made a context")
	}
	m := map[string]string{}
	metainfo.ToWire(nilCtx, m)
	if len(m) != 0 {
		t.Fatalf("ToWire(nil) wrote %v", m)
	}
	if metainfo.FromWire(nilCtx, map[string]string{"other": "x"}) != nil {
		t.Fatal("FromWire(nil) without values made a context")
	}

	ctx := metainfo.WithValue(nilCtx, "k", "v")
	if v, _ := metainfo.GetValue(ctx, "k"); v != "v" {
		t.Fatalf("WithValue(nil): GetValue = %q, want v", v)
	}
	ctx = metainfo.WithPersistentValue(nilCtx, "p", "q")
	if v, _ := metainfo.GetPersistentValue(ctx, "p"); v != "q" {
		t.Fatalf("WithPersistentValue(nil): GetPersistentValue = %q, want q", v)
	}
	ctx = metainfo.FromWire(nilCtx, map[string]string{metainfo.PrefixPersistent + "a": "b"})
	if v, _ := metainfo.GetPersistentValue(ctx, "a"); v != "b" {
		t.Fatalf("FromWire(nil): GetPersistentValue = %q, want b", v)
	}
}

// TestToWireNilMap: ToWire has nowhere to add values when m is nil; it
// returns instead of panicking (the test fails by the panic).
func TestToWireNilMap(t *testing.T) {
	ctx := metainfo.WithValue(context.Background(), "k", "v")
	metainfo.ToWire(ctx, nil)
}
