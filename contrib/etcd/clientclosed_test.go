package etcd_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestNextAfterClientClosed: a watcher whose etcd client was closed says so
// at once, rather than retry reading the instances through the closed
// client until the caller's context ends (forever without a deadline).
func TestNextAfterClientClosed(t *testing.T) {
	endpoint := startEtcd(t)
	c := newClient(t, endpoint)
	res := newResolver(t, c)
	w := watch(t, res, "S")
	defer w.Close()
	nextWithin(t, w, time.Second)
	c.Close()
	for i := range 2 { // the Next that sees the watch end, and one more
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		_, err := w.Next(ctx)
		late := ctx.Err() != nil
		cancel()
		if err == nil || late || !strings.Contains(err.Error(), "client is closed") || !strings.Contains(err.Error(), "S") {
			t.Fatalf("Next #%d after the etcd client was closed = %v after %v, want at once an error saying the client of service S is closed", i+1, err, time.Since(start))
		}
	}
	if _, err := res.Resolve(context.Background(), "S"); err == nil || !strings.Contains(err.Error(), "client is closed") {
		t.Fatalf("Resolve after the etcd client was closed = %v, want an error saying it is closed", err)
	}
}
