package etcd_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/discovery"
)

// TestErrorsNameEndpointAndKey: when etcd cannot be reached, the errors of
// Register, Resolve and Watch say which etcd (its endpoint), which key and
// what failed, and still wrap the cause.
func TestErrorsNameEndpointAndKey(t *testing.T) {
	endpoint := freeURL(t).Host // nothing listens there
	c := newClient(t, endpoint)
	defer c.Close()
	reg := newRegistry(t, etcd.Config{Client: c, TTL: 3 * time.Second, Logger: quiet})
	defer reg.Close()
	res := newResolver(t, c)
	call := func(f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		return f(ctx)
	}
	key := etcd.DefaultPrefix + "S/127.0.0.1:1"
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"Register", call(func(ctx context.Context) error {
			return reg.Register(ctx, "S", discovery.Instance{Address: "127.0.0.1:1"})
		}), []string{endpoint, key, "lease"}},
		{"Resolve", call(func(ctx context.Context) error { _, err := res.Resolve(ctx, "S"); return err }), []string{endpoint, etcd.DefaultPrefix + "S/"}},
		{"Watch", call(func(ctx context.Context) error { _, err := res.Watch(ctx, "S"); return err }), []string{endpoint, etcd.DefaultPrefix + "S/"}},
	} {
		if tc.err == nil {
			t.Errorf("%s succeeded with etcd unreachable", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%s: error %q does not name %q", tc.name, tc.err, w)
			}
		}
		if !errors.Is(tc.err, context.DeadlineExceeded) {
			t.Errorf("%s: error %q does not wrap context.DeadlineExceeded", tc.name, tc.err)
		}
	}
}
