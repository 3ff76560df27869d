package etcd_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/petrel-rpc/petrel/contrib/etcd"
)

// TestRefusedWatchDoesNotSpin: when etcd answers reads but ends every watch
// at once (here a stream interceptor refuses them, as etcd does a watch it
// will not serve), Next reads the instances again at a slowing pace, not
// in a loop as fast as etcd answers, and still ends with its context.
func TestRefusedWatchDoesNotSpin(t *testing.T) {
	endpoint := startEtcd(t)
	var refuse atomic.Bool
	var reads atomic.Int64
	c, err := clientv3.New(clientv3.Config{
		Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{
			grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				if strings.HasSuffix(method, "/Range") {
					reads.Add(1)
				}
				return invoker(ctx, method, req, reply, cc, opts...)
			}),
			grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				if strings.HasSuffix(method, "/Watch") && refuse.Load() {
					return nil, status.Error(codes.PermissionDenied, "test: watches refused")
				}
				return streamer(ctx, desc, cc, method, opts...)
			}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res := newResolver(t, c)
	refuse.Store(true)
	w := watch(t, res, "S")
	defer w.Close()
	nextWithin(t, w, time.Second)
	reads.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = w.Next(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next while every watch is refused = %v, want the context's deadline", err)
	}
	if n := reads.Load(); n > 10 {
		t.Fatalf("Next read the instances %d times in 1 s while every watch was refused, want at most 10", n)
	}
	// Once etcd serves watches again, changes arrive.
	refuse.Store(false)
	if _, err := c.Put(context.Background(), etcd.DefaultPrefix+"S/a", `{"address":"a:1"}`); err != nil {
		t.Fatal(err)
	}
	list, _ := nextWithin(t, w, 7*time.Second)
	if len(list) != 1 || list[0].Address != "a:1" {
		t.Fatalf("after watches came back and a:1 was put: %v", list)
	}
}
