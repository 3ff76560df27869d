package etcd_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/petrel-rpc/petrel/contrib/etcd"
)

// TestRefusedReadsPaced: once the watcher must read the instances again
// and etcd refuses the reads (here the resolver's user lost its read
// permission), a caller calling Next again at once, as the Watcher
// contract allows, reads no faster than the watcher's doubling pause: it
// read again at once, some 1,800 times a second.
func TestRefusedReadsPaced(t *testing.T) {
	root, _ := authEtcd(t)
	var reads atomic.Int64
	c, err := clientv3.New(clientv3.Config{
		Endpoints: []string{root.Endpoints()[0]}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		Username: "reg", Password: "regpw",
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if strings.HasSuffix(method, "/Range") {
				reads.Add(1)
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := etcd.NewResolver(etcd.Config{Client: c, Prefix: "/p/", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	w := watch(t, res, "S")
	defer w.Close()
	nextWithin(t, w, time.Second)
	if _, err := root.RoleRevokePermission(context.Background(), "reg", "/p/", clientv3.GetPrefixRangeEnd("/p/")); err != nil {
		t.Fatal(err)
	}
	etcd.LoseWatch(w) // as a broken watch leaves it
	reads.Store(0)
	failures := 0
	for start := time.Now(); time.Since(start) < time.Second; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := w.Next(ctx)
		cancel()
		if err != nil {
			failures++
		}
	}
	// Pauses of 100, 200, 400 ms...: a handful of reads in a second.
	if n := reads.Load(); n > 8 || failures == 0 {
		t.Errorf("%d reads of the instances in 1 s, %d failed Nexts, against an etcd refusing them; want a few, paced", n, failures)
	}
}
