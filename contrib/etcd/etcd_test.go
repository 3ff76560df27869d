package etcd_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/contrib/internal/testsvc"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
)

// freeURL returns http://127.0.0.1:PORT with a port that was free a moment
// ago (etcd needs its URLs before it listens).
func freeURL(t *testing.T) url.URL {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return url.URL{Scheme: "http", Host: addr}
}

// startEtcd runs a one-member etcd in a temporary directory on loopback
// ports and returns its client endpoint. Its timing is etcd's default (a
// 100 ms heartbeat and a 1 s election timeout), as in production: its
// shortest lease is 2 s (1.5 election timeouts, rounded up to seconds).
func startEtcd(t *testing.T) string {
	t.Helper()
	e := startEtcdServer(t)
	t.Cleanup(e.Close)
	return e.Config().ListenClientUrls[0].Host
}

// startEtcdServer is startEtcd leaving the server to the caller, who closes
// it.
func startEtcdServer(t *testing.T) *embed.Etcd {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "petrel-test"
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	curl, purl := freeURL(t), freeURL(t)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{curl}, []url.URL{curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{purl}, []url.URL{purl}
	cfg.InitialCluster = cfg.Name + "=" + purl.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		t.Fatalf("etcd: %v", err)
	case <-timer.C:
		e.Close()
		t.Fatal("etcd did not become ready in 30 s")
	}
	return e
}

func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newRegistry makes a registry of cfg, failing the test if it cannot. The
// caller closes it.
func newRegistry(t *testing.T, cfg etcd.Config) *etcd.Registry {
	t.Helper()
	reg, err := etcd.NewRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// newResolver makes a resolver over c that logs nowhere, failing the test
// if it cannot.
func newResolver(t *testing.T, c *clientv3.Client) *etcd.Resolver {
	t.Helper()
	res, err := etcd.NewResolver(etcd.Config{Client: c, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// watch starts res's watch of service, failing the test if it cannot. The
// caller closes the watcher.
func watch(t *testing.T, res *etcd.Resolver, service string) discovery.Watcher {
	t.Helper()
	w, err := res.Watch(context.Background(), service)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// nextWithin waits for the watcher's next list and returns it with the
// time it took.
func nextWithin(t *testing.T, w discovery.Watcher, limit time.Duration) ([]discovery.Instance, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	list, err := w.Next(ctx)
	if err != nil {
		t.Fatalf("Next after %v: %v", time.Since(start), err)
	}
	return list, time.Since(start)
}

// watchEmpty starts an etcd, a resolver and its watch of service, and checks
// that the watch's first list is empty. They end with the test.
func watchEmpty(t *testing.T, service string) (endpoint string, res *etcd.Resolver, w discovery.Watcher) {
	t.Helper()
	endpoint = startEtcd(t)
	rcli := newClient(t, endpoint)
	t.Cleanup(func() { rcli.Close() })
	res = newResolver(t, rcli)
	w = watch(t, res, service)
	t.Cleanup(func() { w.Close() })
	if list, _ := nextWithin(t, w, time.Second); len(list) != 0 {
		t.Fatalf("first list %v, want empty", list)
	}
	return endpoint, res, w
}

// TestRegistryAndWatch: a watching client sees a Petrel server's instance
// appear when it registers and disappear when it deregisters (graceful
// stop), each within 1 s. (TestCrashRemoval kills a registered process.)
func TestRegistryAndWatch(t *testing.T) {
	endpoint, res, w := watchEmpty(t, "Hello")
	ctx := context.Background()

	// Register a real server.
	_, addr := testsvc.Start(t, &testsvc.Echo{})
	const ttl = 3 * time.Second
	regCli := newClient(t, endpoint)
	defer regCli.Close()
	reg := newRegistry(t, etcd.Config{Client: regCli, TTL: ttl, Logger: quiet})
	defer reg.Close()
	inst := discovery.Instance{Address: addr, Weight: 20, Tags: map[string]string{"zone": "a"}}
	t0 := time.Now()
	if err := reg.Register(ctx, "Hello", inst); err != nil {
		t.Fatal(err)
	}
	list, _ := nextWithin(t, w, 2*time.Second)
	appear := time.Since(t0)
	if !discovery.Equal(list, []discovery.Instance{inst}) {
		t.Fatalf("after Register: %+v, want %+v", list, inst)
	}
	// The address works: call the server through it.
	cli, err := hello.NewHelloClient("Hello", client.WithHostPorts(list[0].Address))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := cli.Greet(ctx, "etcd"); err != nil || r != "hello etcd" {
		t.Fatalf("call to the registered instance: %q %v", r, err)
	}
	cli.Close()
	if got, err := res.Resolve(ctx, "Hello"); err != nil || !discovery.Equal(got, list) {
		t.Fatalf("Resolve: %v %v", got, err)
	}

	// Graceful stop.
	t1 := time.Now()
	if err := reg.Deregister(ctx, "Hello", inst); err != nil {
		t.Fatal(err)
	}
	list, _ = nextWithin(t, w, 2*time.Second)
	disappear := time.Since(t1)
	if len(list) != 0 {
		t.Fatalf("after Deregister: %+v", list)
	}

	t.Logf("instance visible to the watcher %v after Register, gone %v after Deregister",
		appear.Round(time.Millisecond), disappear.Round(time.Millisecond))
	if appear > time.Second || disappear > time.Second {
		t.Errorf("register %v / deregister %v: want each within 1 s", appear, disappear)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Next(ctx); !errors.Is(err, discovery.ErrWatcherClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

// TestGracefulClose: Close revokes the lease, removing every instance the
// registry holds at once; bad values in etcd are skipped.
func TestGracefulClose(t *testing.T) {
	endpoint := startEtcd(t)
	c := newClient(t, endpoint)
	defer c.Close()
	ctx := context.Background()
	reg := newRegistry(t, etcd.Config{Client: c, Prefix: "/p", Logger: quiet})
	for _, a := range []string{"127.0.0.1:1", "127.0.0.1:2"} {
		if err := reg.Register(ctx, "S", discovery.Instance{Address: a}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Put(ctx, "/p/S/garbage", "{not json"); err != nil {
		t.Fatal(err)
	}
	res, _ := etcd.NewResolver(etcd.Config{Client: c, Prefix: "/p", Logger: quiet})
	got, err := res.Resolve(ctx, "S")
	if err != nil || len(got) != 2 || got[0].Address != "127.0.0.1:1" {
		t.Fatalf("Resolve: %+v %v", got, err)
	}
	w := watch(t, res, "S")
	defer w.Close()
	nextWithin(t, w, time.Second)
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	list, d := nextWithin(t, w, 2*time.Second)
	if len(list) != 0 {
		t.Fatalf("after Close: %+v", list)
	}
	t.Logf("Close removed both instances; the watcher saw it after %v", d.Round(time.Millisecond))
	if err := reg.Register(ctx, "S", discovery.Instance{Address: "x:1"}); !errors.Is(err, etcd.ErrClosed) {
		t.Fatalf("Register after Close: %v", err)
	}
}

func TestConfig(t *testing.T) {
	if _, err := etcd.NewRegistry(etcd.Config{}); err == nil {
		t.Fatal("NewRegistry without a client succeeded")
	}
	if _, err := etcd.NewResolver(etcd.Config{}); err == nil {
		t.Fatal("NewResolver without a client succeeded")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, ttl := range []time.Duration{-time.Second, time.Second, etcd.MinTTL - time.Millisecond} {
		if _, err := etcd.NewRegistry(etcd.Config{Client: c, TTL: ttl}); err == nil {
			t.Errorf("NewRegistry with TTL %v succeeded", ttl)
		}
	}
	for _, ttl := range []time.Duration{0, etcd.MinTTL, etcd.DefaultTTL} {
		if _, err := etcd.NewRegistry(etcd.Config{Client: c, TTL: ttl}); err != nil {
			t.Errorf("NewRegistry with TTL %v: %v", ttl, err)
		}
	}
}

// TestChangeWhileWatchLost: instances that changed while the watcher had no
// etcd watch (its last resync failed) are reported by the Next that reads
// them again, not only after some later change.
func TestChangeWhileWatchLost(t *testing.T) {
	endpoint, _, w := watchEmpty(t, "S")
	c := newClient(t, endpoint)
	defer c.Close()
	etcd.LoseWatch(w)
	if _, err := c.Put(context.Background(), etcd.DefaultPrefix+"S/127.0.0.1:1", `{"address":"127.0.0.1:1"}`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	list, err := w.Next(ctx)
	if err != nil {
		t.Fatalf("Next after the watch was lost and an instance came: %v", err)
	}
	if len(list) != 1 || list[0].Address != "127.0.0.1:1" {
		t.Fatalf("Next: %+v, want the instance 127.0.0.1:1", list)
	}
}

// TestCloseEndsResync: Close ends a Next that is reading the instances
// again while etcd does not answer.
func TestCloseEndsResync(t *testing.T) {
	e := startEtcdServer(t)
	var closeOnce sync.Once
	stopEtcd := func() { closeOnce.Do(e.Close) }
	t.Cleanup(stopEtcd)
	c := newClient(t, e.Config().ListenClientUrls[0].Host)
	defer c.Close()
	res := newResolver(t, c)
	w := watch(t, res, "S")
	defer w.Close()
	nextWithin(t, w, time.Second)
	etcd.LoseWatch(w)
	stopEtcd()
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, err := w.Next(ctx)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // let Next start reading
	w.Close()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if !errors.Is(err, discovery.ErrWatcherClosed) {
			t.Fatalf("Next closed while reading = %v, want ErrWatcherClosed", err)
		}
	case <-timer.C:
		cancel()
		<-done
		t.Fatal("Close did not end a Next reading the instances in 5 s")
	}
}
