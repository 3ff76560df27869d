package etcd_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/discovery"
)

// authEtcd starts an etcd with authentication on and returns a root client
// and a client of user "reg", who may write only the keys under "/p/".
// Writing elsewhere fails with "permission denied" while granting and
// revoking leases (without keys) still works: a Put that fails after a
// Grant.
func authEtcd(t *testing.T) (root, reg *clientv3.Client) {
	t.Helper()
	endpoint := startEtcd(t)
	c := newClient(t, endpoint)
	defer c.Close()
	ctx := context.Background()
	steps := []func() error{
		func() error { _, err := c.RoleAdd(ctx, "root"); return err },
		func() error { _, err := c.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := c.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := c.RoleAdd(ctx, "reg"); return err },
		func() error {
			_, err := c.RoleGrantPermission(ctx, "reg", "/p/", clientv3.GetPrefixRangeEnd("/p/"), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := c.UserAdd(ctx, "reg", "regpw"); return err },
		func() error { _, err := c.UserGrantRole(ctx, "reg", "reg"); return err },
		func() error { _, err := c.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("auth setup step %d: %v", i, err)
		}
	}
	login := func(user, pw string) *clientv3.Client {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(), Username: user, Password: pw})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.Close() })
		return cli
	}
	return login("root", "rootpw"), login("reg", "regpw")
}

// leases returns the leases etcd holds.
func leases(t *testing.T, root *clientv3.Client) []clientv3.LeaseStatus {
	t.Helper()
	resp, err := root.Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Leases
}

// TestFailedRegisterLeavesNoLease: a first Register whose Put fails after
// its lease was granted gives the lease back (and stops keeping it alive)
// rather than keep a lease with nothing under it until Close.
func TestFailedRegisterLeavesNoLease(t *testing.T) {
	root, cli := authEtcd(t)
	reg := newRegistry(t, etcd.Config{Client: cli, Prefix: "/q/", TTL: 3 * time.Second, Logger: quiet})
	defer reg.Close()
	if err := reg.Register(context.Background(), "S", discovery.Instance{Address: "127.0.0.1:1"}); err == nil {
		t.Fatal("Register outside the user's keys succeeded")
	}
	if id, _ := reg.Lease(); id != 0 {
		t.Errorf("Lease() = %x after a failed Register, want 0", id)
	}
	if ls := leases(t, root); len(ls) != 0 {
		t.Errorf("etcd holds %d leases after a failed Register, want 0", len(ls))
	}
}

// loseLeaseUnwritable takes user "reg"'s write permission away, then
// reg's lease, and waits until reg noticed: from then on it grants new
// leases but cannot put its instances under them.
func loseLeaseUnwritable(t *testing.T, root *clientv3.Client, reg *etcd.Registry) {
	t.Helper()
	ctx := context.Background()
	if _, err := root.RoleRevokePermission(ctx, "reg", "/p/", clientv3.GetPrefixRangeEnd("/p/")); err != nil {
		t.Fatal(err)
	}
	lost, _ := reg.Lease()
	if _, err := root.Revoke(ctx, lost); err != nil {
		t.Fatal(err)
	}
	// The registry notices the loss at its next keep-alive (within a
	// second).
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if id, _ := reg.Lease(); id != lost {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the registry did not notice its lease's loss within 5 s")
		}
	}
}

// TestFailedRenewLeaksNoLease: while the registry cannot put its
// instances again under a new lease (its lease was lost and etcd refuses
// the Puts), each failed try gives its lease back: etcd never holds more
// than one lease of the registry, and once the Puts work again the
// instance is back under a single lease, which Close revokes.
func TestFailedRenewLeaksNoLease(t *testing.T) {
	root, cli := authEtcd(t)
	ctx := context.Background()
	reg := newRegistry(t, etcd.Config{Client: cli, Prefix: "/p/", TTL: 3 * time.Second, Logger: quiet})
	defer reg.Close()
	if err := reg.Register(ctx, "S", discovery.Instance{Address: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	loseLeaseUnwritable(t, root, reg)
	// The registry retries after 100 ms, 200 ms, 400 ms, 800 ms: watch
	// etcd's leases for as long.
	most := 0
	for start := time.Now(); time.Since(start) < 2*time.Second; time.Sleep(50 * time.Millisecond) {
		most = max(most, len(leases(t, root)))
	}
	if most > 1 {
		t.Errorf("etcd held %d leases while the registry failed to register again, want at most 1", most)
	}
	// Give the permission back: the instance comes back, under one lease.
	if _, err := root.RoleGrantPermission(ctx, "reg", "/p/", clientv3.GetPrefixRangeEnd("/p/"), clientv3.PermissionType(clientv3.PermReadWrite)); err != nil {
		t.Fatal(err)
	}
	var got *clientv3.GetResponse
	var err error
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		got, err = root.Get(ctx, "/p/S/127.0.0.1:1")
		if err == nil && len(got.Kvs) == 1 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the instance did not come back within 10 s")
		}
	}
	if ls := leases(t, root); len(ls) != 1 || ls[0].ID != clientv3.LeaseID(got.Kvs[0].Lease) {
		t.Errorf("leases after recovery: %+v, want only the instance's %x", ls, got.Kvs[0].Lease)
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	if ls := leases(t, root); len(ls) != 0 {
		t.Errorf("etcd holds %d leases after Close, want 0", len(ls))
	}
}

// TestCloseWhileRenewFails: Close while the registry is failing to put its
// instances under a new lease ends the retries and leaves etcd no lease.
func TestCloseWhileRenewFails(t *testing.T) {
	root, cli := authEtcd(t)
	reg := newRegistry(t, etcd.Config{Client: cli, Prefix: "/p/", TTL: 3 * time.Second, Logger: quiet})
	if err := reg.Register(context.Background(), "S", discovery.Instance{Address: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	loseLeaseUnwritable(t, root, reg)
	time.Sleep(300 * time.Millisecond) // a retry or two
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	if ls := leases(t, root); len(ls) != 0 {
		t.Errorf("etcd holds %d leases after Close, want 0", len(ls))
	}
}
