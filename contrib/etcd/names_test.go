package etcd_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/discovery"
)

// TestServiceNameWithSlash: a service name holding "/" would make keys
// that another service's prefix takes in (service "a" would see the
// instances of "a/b"), so Register, Deregister, Resolve and Watch refuse it,
// naming the service; nothing is written to etcd.
func TestServiceNameWithSlash(t *testing.T) {
	endpoint := startEtcd(t)
	c := newClient(t, endpoint)
	defer c.Close()
	ctx := context.Background()
	reg := newRegistry(t, etcd.Config{Client: c, Logger: quiet})
	defer reg.Close()
	res := newResolver(t, c)
	inst := discovery.Instance{Address: "127.0.0.1:1"}
	for _, name := range []string{"a/b", "/a", "a/"} {
		if err := reg.Register(ctx, name, inst); err == nil || !strings.Contains(err.Error(), `"`+name+`"`) {
			t.Errorf("Register(%q) = %v, want an error naming it", name, err)
		}
		if _, err := res.Resolve(ctx, name); err == nil {
			t.Errorf("Resolve(%q) succeeded", name)
		}
		if w, err := res.Watch(ctx, name); err == nil {
			w.Close()
			t.Errorf("Watch(%q) succeeded", name)
		}
	}
	if got, err := res.Resolve(ctx, "a"); err != nil || len(got) != 0 {
		t.Fatalf(`Resolve("a") = %+v, %v; want no instances`, got, err)
	}
	for _, name := range []string{"a/b", "/a", "a/"} {
		if err := reg.Deregister(ctx, name, inst); err == nil {
			t.Errorf("Deregister(%q) succeeded", name)
		}
	}
	// An address may hold "/" (a Unix socket's path): the service name
	// ends at the first "/" after the prefix.
	unix := discovery.Instance{Address: "/run/a.sock"}
	if err := reg.Register(ctx, "a", unix); err != nil {
		t.Fatal(err)
	}
	if got, err := res.Resolve(ctx, "a"); err != nil || !discovery.Equal(got, []discovery.Instance{unix}) {
		t.Fatalf(`Resolve("a") = %+v, %v; want %+v`, got, err, unix)
	}
}
