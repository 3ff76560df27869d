package etcd_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/discovery"
)

// TestDeregisterLastGivesLeaseBack: once its last instance is deregistered,
// the registry gives its lease back (and stops keeping it alive) rather
// than keep it until Close; the next Register grants a new one.
func TestDeregisterLastGivesLeaseBack(t *testing.T) {
	c := newClient(t, startEtcd(t))
	defer c.Close()
	ctx := context.Background()
	reg := newRegistry(t, etcd.Config{Client: c, Prefix: "/p/", TTL: 3 * time.Second, Logger: quiet})
	defer reg.Close()
	a, b := discovery.Instance{Address: "127.0.0.1:1"}, discovery.Instance{Address: "127.0.0.1:2"}
	for _, in := range []discovery.Instance{a, b} {
		if err := reg.Register(ctx, "S", in); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.Deregister(ctx, "S", a); err != nil {
		t.Fatal(err)
	}
	if id, _ := reg.Lease(); id == 0 {
		t.Fatal("Lease() = 0 while an instance is still registered")
	}
	if err := reg.Deregister(ctx, "S", b); err != nil {
		t.Fatal(err)
	}
	if id, _ := reg.Lease(); id != 0 {
		t.Errorf("Lease() = %x after the last Deregister, want 0", id)
	}
	if ls := leases(t, c); len(ls) != 0 {
		t.Errorf("etcd holds %d leases after the last Deregister, want 0", len(ls))
	}
	if err := reg.Register(ctx, "S", a); err != nil {
		t.Fatal(err)
	}
	if id, _ := reg.Lease(); id == 0 {
		t.Error("Lease() = 0 after Register again")
	}
	if ls := leases(t, c); len(ls) != 1 {
		t.Errorf("etcd holds %d leases after Register again, want 1", len(ls))
	}
}

// TestFailedDeregisterOfLastGoesWithLease: when the Delete of the last
// instance fails (here etcd refuses the write, and so the lease's
// revocation too), the registry still lets go of the lease: it stops
// keeping it alive, and the instance goes when the lease expires, within
// Config.TTL.
func TestFailedDeregisterOfLastGoesWithLease(t *testing.T) {
	root, cli := authEtcd(t)
	ctx := context.Background()
	const ttl = 3 * time.Second
	reg := newRegistry(t, etcd.Config{Client: cli, Prefix: "/p/", TTL: ttl, Logger: quiet})
	defer reg.Close()
	inst := discovery.Instance{Address: "127.0.0.1:1"}
	if err := reg.Register(ctx, "S", inst); err != nil {
		t.Fatal(err)
	}
	if _, err := root.RoleRevokePermission(ctx, "reg", "/p/", clientv3.GetPrefixRangeEnd("/p/")); err != nil {
		t.Fatal(err)
	}
	failed := time.Now()
	if err := reg.Deregister(ctx, "S", inst); err == nil {
		t.Fatal("Deregister without write permission succeeded")
	}
	if id, _ := reg.Lease(); id != 0 {
		t.Errorf("Lease() = %x after the last Deregister, want 0", id)
	}
	for {
		got, err := root.Get(ctx, "/p/S/127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Kvs) == 0 {
			break
		}
		if time.Since(failed) > ttl+2*time.Second {
			t.Fatalf("the instance whose Deregister failed is still in etcd %v later (TTL %v): its lease is kept alive", time.Since(failed).Round(time.Millisecond), ttl)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the instance left etcd %v after its failed Deregister", time.Since(failed).Round(time.Millisecond))
}

// TestDeregisterLeavesAnotherProcesssKey: a new server registers the same
// address (its own registry, its own lease) before the old one stops; the
// old one's Deregister must not delete the new one's key, which it used to:
// the healthy new server vanished from discovery until it registered again.
func TestDeregisterLeavesAnotherProcesssKey(t *testing.T) {
	c := newClient(t, startEtcd(t))
	defer c.Close()
	ctx := context.Background()
	oldReg := newRegistry(t, etcd.Config{Client: c, Prefix: "/p/", TTL: 3 * time.Second, Logger: quiet})
	defer oldReg.Close()
	newReg := newRegistry(t, etcd.Config{Client: c, Prefix: "/p/", TTL: 3 * time.Second, Logger: quiet})
	defer newReg.Close()
	in := discovery.Instance{Address: "127.0.0.1:1"}
	for _, r := range []*etcd.Registry{oldReg, newReg} {
		if err := r.Register(ctx, "S", in); err != nil {
			t.Fatal(err)
		}
	}
	if err := oldReg.Deregister(ctx, "S", in); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(ctx, "/p/S/127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	newLease, _ := newReg.Lease()
	if len(resp.Kvs) != 1 || clientv3.LeaseID(resp.Kvs[0].Lease) != newLease {
		t.Fatalf("after the old registry's Deregister: %d keys (want the new registry's, lease %x)", len(resp.Kvs), newLease)
	}
	// The new registry's own Deregister does delete it.
	if err := newReg.Deregister(ctx, "S", in); err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Get(ctx, "/p/S/127.0.0.1:1"); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("after the new registry's Deregister: %v, %d keys, want none", err, len(resp.Kvs))
	}
}
