package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/discovery"
)

// TestLostLeaseRegistersAgain: when the registry's lease disappears (here
// revoked by another client, as an expiry would), its instance goes and
// the registry puts it back under a new lease; a watcher sees it again.
func TestLostLeaseRegistersAgain(t *testing.T) {
	endpoint, _, w := watchEmpty(t, "S")
	c := newClient(t, endpoint)
	defer c.Close()
	reg := newRegistry(t, etcd.Config{Client: c, Logger: quiet, TTL: 3 * time.Second})
	defer reg.Close()
	inst := discovery.Instance{Address: "127.0.0.1:1"}
	if err := reg.Register(context.Background(), "S", inst); err != nil {
		t.Fatal(err)
	}
	if list, _ := nextWithin(t, w, 2*time.Second); len(list) != 1 {
		t.Fatalf("after Register: %v", list)
	}
	id, _ := reg.Lease()
	other := newClient(t, endpoint)
	defer other.Close()
	if _, err := other.Revoke(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if list, _ := nextWithin(t, w, 2*time.Second); len(list) != 0 {
		t.Fatalf("after the lease was revoked: %v, want none", list)
	}
	list, _ := nextWithin(t, w, 5*time.Second)
	if len(list) != 1 || list[0].Address != inst.Address {
		t.Fatalf("after the lease was lost: %v, want the instance back", list)
	}
	if nid, _ := reg.Lease(); nid == 0 || nid == id {
		t.Fatalf("lease after loss %x (lost %x), want a new one", nid, id)
	}
}

// TestBadValueSkipped: an undecodable value under the service's prefix is
// skipped, by Resolve, the watch's first list and its changes, and the
// other instances are kept.
func TestBadValueSkipped(t *testing.T) {
	endpoint := startEtcd(t)
	c := newClient(t, endpoint)
	defer c.Close()
	ctx := context.Background()
	p := etcd.DefaultPrefix + "S/"
	for k, v := range map[string]string{p + "a": `{"address":"a:1"}`, p + "b": `{not json`, p + "c": `{"weight":3}`} {
		if _, err := c.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	res := newResolver(t, c)
	list, err := res.Resolve(ctx, "S")
	if err != nil || len(list) != 1 || list[0].Address != "a:1" {
		t.Fatalf("Resolve = %v, %v; want only a:1", list, err)
	}
	w := watch(t, res, "S")
	defer w.Close()
	if list, _ := nextWithin(t, w, time.Second); len(list) != 1 {
		t.Fatalf("first list %v, want only a:1", list)
	}
	if _, err := c.Put(ctx, p+"d", `[`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, p+"e", `{"address":"e:1"}`); err != nil {
		t.Fatal(err)
	}
	list, _ = nextWithin(t, w, 2*time.Second)
	if len(list) != 2 || list[0].Address != "a:1" || list[1].Address != "e:1" {
		t.Fatalf("after a bad and a good Put: %v, want a:1 and e:1", list)
	}
}

// TestCompactedWatchReadsAgain: a watch whose revision was compacted away
// reads the instances again and goes on watching from there.
func TestCompactedWatchReadsAgain(t *testing.T) {
	endpoint, _, w := watchEmpty(t, "S")
	c := newClient(t, endpoint)
	defer c.Close()
	ctx := context.Background()
	p := etcd.DefaultPrefix + "S/"
	first, err := c.Put(ctx, p+"a", `{"address":"a:1"}`)
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := nextWithin(t, w, time.Second); len(list) != 1 {
		t.Fatalf("after a: %v", list)
	}
	last, err := c.Put(ctx, p+"b", `{"address":"b:1"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(ctx, last.Header.Revision); err != nil {
		t.Fatal(err)
	}
	etcd.WatchFrom(w, first.Header.Revision-5)
	list, _ := nextWithin(t, w, 2*time.Second)
	if len(list) != 2 {
		t.Fatalf("after the compaction: %v, want a:1 and b:1", list)
	}
	if _, err := c.Put(ctx, p+"c", `{"address":"c:1"}`); err != nil {
		t.Fatal(err)
	}
	if list, _ := nextWithin(t, w, 2*time.Second); len(list) != 3 {
		t.Fatalf("a Put after the compaction: %v, want 3 instances", list)
	}
}
