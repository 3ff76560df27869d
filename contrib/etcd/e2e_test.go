package etcd_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/contrib/internal/testsvc"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/server"
)

// TestServersAndClientThroughEtcd: Petrel servers register themselves
// (server.WithRegistry) and a Petrel client finds them (client.WithResolver)
// through etcd. A second server starts taking calls once it registers; a
// server stopped gracefully stops getting calls, and no call fails.
func TestServersAndClientThroughEtcd(t *testing.T) {
	endpoint := startEtcd(t)
	ctx := context.Background()
	var lastA atomic.Int64 // unix nanoseconds of server A's last call
	newServer := func(hits, last *atomic.Int64) *server.Server {
		c := newClient(t, endpoint)
		t.Cleanup(func() { c.Close() })
		reg := newRegistry(t, etcd.Config{Client: c, TTL: 3 * time.Second, Logger: quiet})
		t.Cleanup(func() { reg.Close() })
		count := func(context.Context, *hello.EchoRequest) error {
			hits.Add(1)
			if last != nil {
				last.Store(time.Now().UnixNano())
			}
			return nil
		}
		s, _ := testsvc.Start(t, &testsvc.Echo{Next: count}, server.WithRegistry(reg, discovery.Instance{}))
		return s
	}
	var hitsA, hitsB atomic.Int64
	sA := newServer(&hitsA, &lastA)

	rc := newClient(t, endpoint)
	defer rc.Close()
	res := newResolver(t, rc)
	// Serve (and so the registration) runs in the background: wait for A.
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if list, err := res.Resolve(ctx, "Hello"); err == nil && len(list) == 1 {
			break
		}
		if time.Since(start) > 3*time.Second {
			t.Fatal("server A did not register within 3 s")
		}
	}
	cli, err := hello.NewHelloClient("Hello", client.WithResolver(res))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	call := func() {
		t.Helper()
		if _, err := cli.Echo(ctx, &hello.EchoRequest{Action: "echo"}); err != nil {
			t.Fatalf("call: %v", err)
		}
	}
	// callUntil calls until cond holds, and returns how long it took.
	callUntil := func(what string, cond func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !cond() {
			if time.Since(start) > 3*time.Second {
				t.Fatalf("%s: not after 3 s (A %d, B %d calls)", what, hitsA.Load(), hitsB.Load())
			}
			call()
			time.Sleep(time.Millisecond)
		}
		return time.Since(start)
	}
	for i := 0; i < 10; i++ {
		call()
	}
	if hitsA.Load() != 10 {
		t.Fatalf("server A served %d of 10 calls", hitsA.Load())
	}

	newServer(&hitsB, nil)
	toB := callUntil("calls reach the new server B", func() bool { return hitsB.Load() > 0 })

	// Stop A gracefully while calls go on: it deregisters first, then
	// drains. Its last call must come soon after Stop began.
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	t1 := time.Now()
	go func() { stopped <- sA.Stop(stopCtx) }()
	var stopErr error
	for done := false; !done; {
		select {
		case stopErr = <-stopped:
			done = true
		default:
			call()
			time.Sleep(time.Millisecond)
		}
	}
	if stopErr != nil {
		t.Fatalf("Stop: %v", stopErr)
	}
	before := hitsA.Load()
	for i := 0; i < 20; i++ {
		call()
	}
	if hitsA.Load() != before {
		t.Fatalf("server A still served calls after it stopped")
	}
	offA := time.Unix(0, lastA.Load()).Sub(t1)
	if offA > time.Second {
		t.Errorf("server A got calls %v after its Stop began, want under 1 s", offA)
	}
	t.Logf("server B (registering as it starts) got its first call %v after it was started; after A's Stop began, A's last call came %v later", toB.Round(time.Millisecond), offA.Round(time.Millisecond))
}
