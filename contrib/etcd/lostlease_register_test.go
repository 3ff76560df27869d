package etcd_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/discovery"
)

// TestRegisterAfterLeaseLost: a Register made after the registry's lease
// was lost (revoked here, as by an etcd that lost its data or an expiry)
// but before the registry noticed succeeds: it replaces the lease, and
// both the new instance and the one registered before are in etcd under
// the new lease.
func TestRegisterAfterLeaseLost(t *testing.T) {
	endpoint := startEtcd(t)
	c := newClient(t, endpoint)
	defer c.Close()
	ctx := context.Background()
	reg := newRegistry(t, etcd.Config{Client: c, Prefix: "/p/", TTL: 3 * time.Second, Logger: quiet})
	defer reg.Close()
	a, b := discovery.Instance{Address: "127.0.0.1:1"}, discovery.Instance{Address: "127.0.0.1:2"}
	if err := reg.Register(ctx, "S", a); err != nil {
		t.Fatal(err)
	}
	lost, _ := reg.Lease()
	other := newClient(t, endpoint)
	defer other.Close()
	if _, err := other.Revoke(ctx, lost); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(ctx, "S", b); err != nil {
		t.Fatalf("Register after the lease was lost: %v", err)
	}
	id, _ := reg.Lease()
	if id == 0 || id == lost {
		t.Fatalf("Lease() = %x after Register (lost %x), want a new lease", id, lost)
	}
	resp, err := other.Get(ctx, "/p/S/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 2 {
		t.Fatalf("etcd holds %d instances, want 2", len(resp.Kvs))
	}
	for _, kv := range resp.Kvs {
		if kv.Lease != int64(id) {
			t.Errorf("%s is under lease %x, want %x", kv.Key, kv.Lease, id)
		}
	}
}

// TestRegisterAfterLeaseLostFailing: when such a Register cannot replace
// the lost lease (here etcd refuses the Puts), it fails, and the registry
// keeps trying to put the instances registered before: once etcd takes
// them again they are back, under a single lease.
func TestRegisterAfterLeaseLostFailing(t *testing.T) {
	root, cli := authEtcd(t)
	ctx := context.Background()
	reg := newRegistry(t, etcd.Config{Client: cli, Prefix: "/p/", TTL: 3 * time.Second, Logger: quiet})
	defer reg.Close()
	if err := reg.Register(ctx, "S", discovery.Instance{Address: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.RoleRevokePermission(ctx, "reg", "/p/", clientv3.GetPrefixRangeEnd("/p/")); err != nil {
		t.Fatal(err)
	}
	lost, _ := reg.Lease()
	if _, err := root.Revoke(ctx, lost); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(ctx, "S", discovery.Instance{Address: "127.0.0.1:2"}); err == nil {
		t.Fatal("Register succeeded while etcd refuses the user's Puts")
	}
	if _, err := root.RoleGrantPermission(ctx, "reg", "/p/", clientv3.GetPrefixRangeEnd("/p/"), clientv3.PermissionType(clientv3.PermReadWrite)); err != nil {
		t.Fatal(err)
	}
	var got *clientv3.GetResponse
	var err error
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		got, err = root.Get(ctx, "/p/S/", clientv3.WithPrefix())
		if err == nil && len(got.Kvs) == 1 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the instance registered before did not come back within 10 s")
		}
	}
	if string(got.Kvs[0].Key) != "/p/S/127.0.0.1:1" {
		t.Errorf("back: %s, want /p/S/127.0.0.1:1", got.Kvs[0].Key)
	}
	if ls := leases(t, root); len(ls) != 1 || ls[0].ID != clientv3.LeaseID(got.Kvs[0].Lease) {
		t.Errorf("leases after recovery: %+v, want only the instance's %x", ls, got.Kvs[0].Lease)
	}
}
