package etcd_test

import (
	"context"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/discovery"
)

// A server registers its instance under a lease; a client watches the
// service's instances. (Not run: it needs an etcd at 127.0.0.1:2379.)
func Example() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: time.Second})
	if err != nil {
		slog.Error("etcd", "err", err)
		return
	}
	defer cli.Close()
	ctx := context.Background()

	reg, _ := etcd.NewRegistry(etcd.Config{Client: cli, TTL: 10 * time.Second})
	defer reg.Close() // revokes the lease: the instance leaves at once
	if err := reg.Register(ctx, "Hello", discovery.Instance{Address: "127.0.0.1:8888", Weight: 10}); err != nil {
		slog.Error("register", "err", err)
		return
	}

	res, _ := etcd.NewResolver(etcd.Config{Client: cli})
	w, err := res.Watch(ctx, "Hello")
	if err != nil {
		return
	}
	defer w.Close()
	for {
		list, err := w.Next(ctx)
		if err != nil {
			return
		}
		slog.Info("instances of Hello", "n", len(list))
	}
}
