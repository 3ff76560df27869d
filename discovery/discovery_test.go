package discovery_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/petrel-rpc/petrel/discovery"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func addrs(list []discovery.Instance) []string {
	out := make([]string, len(list))
	for i, in := range list {
		out[i] = in.Address
	}
	return out
}

func TestEffectiveWeight(t *testing.T) {
	for _, c := range []struct{ in, want int }{
		{0, discovery.DefaultWeight}, {-5, discovery.DefaultWeight}, {1, 1}, {77, 77},
		{discovery.MaxWeight + 1, discovery.MaxWeight}, {1 << 40, discovery.MaxWeight},
	} {
		if got := (discovery.Instance{Weight: c.in}).EffectiveWeight(); got != c.want {
			t.Errorf("EffectiveWeight(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestEqual(t *testing.T) {
	a := []discovery.Instance{{Address: "a:1"}, {Address: "b:1", Weight: 3, Tags: map[string]string{"zone": "x"}}}
	b := []discovery.Instance{{Address: "b:1", Weight: 3, Tags: map[string]string{"zone": "x"}}, {Address: "a:1", Weight: discovery.DefaultWeight}}
	if !discovery.Equal(a, b) {
		t.Error("same instances in another order are not Equal")
	}
	b[0].Tags = map[string]string{"zone": "y"}
	if discovery.Equal(a, b) {
		t.Error("different tags are Equal")
	}
	if discovery.Equal(a, a[:1]) {
		t.Error("different lengths are Equal")
	}
	c := []discovery.Instance{{Address: "a:1"}, {Address: "b:1", Weight: 4, Tags: map[string]string{"zone": "x"}}}
	if discovery.Equal(a, c) {
		t.Error("different weights are Equal")
	}
}

func TestStaticResolveAndWatch(t *testing.T) {
	s := discovery.NewStatic(discovery.Instance{Address: "a:1", Tags: map[string]string{"k": "v"}})
	ctx := context.Background()
	list, err := s.Resolve(ctx, "any")
	if err != nil || len(list) != 1 || list[0].Address != "a:1" {
		t.Fatalf("Resolve = %v, %v", list, err)
	}
	list[0].Tags["k"] = "changed" // the caller owns its copy
	w, err := s.Watch(ctx, "any")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	first, err := w.Next(ctx)
	if err != nil || len(first) != 1 || first[0].Tags["k"] != "v" {
		t.Fatalf("first Next = %v, %v", first, err)
	}
	got := make(chan []discovery.Instance)
	go func() {
		l, err := w.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	select {
	case l := <-got:
		t.Fatalf("Next returned %v before any change", l)
	case <-time.After(20 * time.Millisecond):
	}
	s.Set(discovery.Instance{Address: "a:1"}, discovery.Instance{Address: "b:2"})
	select {
	case l := <-got:
		if len(l) != 2 || l[1].Address != "b:2" {
			t.Fatalf("after Set, Next = %v", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next did not return after Set")
	}
}

func TestStaticWatcherCloseAndCancel(t *testing.T) {
	s := discovery.NewStaticAddrs("a:1")
	w, _ := s.Watch(context.Background(), "svc")
	if _, err := w.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := w.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with an ending context = %v", err)
	}
	done := make(chan error)
	go func() {
		_, err := w.Next(context.Background())
		done <- err
	}()
	time.Sleep(5 * time.Millisecond)
	w.Close()
	if err := <-done; !errors.Is(err, discovery.ErrWatcherClosed) {
		t.Fatalf("Next after Close = %v", err)
	}
	if _, err := w.Next(context.Background()); !errors.Is(err, discovery.ErrWatcherClosed) {
		t.Fatalf("Next on a closed watcher = %v", err)
	}
}

// fakeDNS answers lookups from a table the test changes.
type fakeDNS struct {
	mu      sync.Mutex
	hosts   map[string][]string
	srv     map[string][]*net.SRV
	err     error
	lookups int
}

func (f *fakeDNS) set(host string, addrs ...string) {
	f.mu.Lock()
	f.hosts[host] = addrs
	f.mu.Unlock()
}

func (f *fakeDNS) fail(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *fakeDNS) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

func (f *fakeDNS) lookupHost(ctx context.Context, host string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.err != nil {
		return nil, f.err
	}
	a, ok := f.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return append([]string(nil), a...), nil
}

func (f *fakeDNS) lookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	return name, f.srv[name], nil
}

func newFake() *fakeDNS {
	return &fakeDNS{hosts: map[string][]string{}, srv: map[string][]*net.SRV{}}
}

func TestDNSResolveHost(t *testing.T) {
	f := newFake()
	f.set("svc.local", "10.0.0.2", "10.0.0.1", "10.0.0.2", "fd00::1")
	d, err := discovery.NewDNS(discovery.DNSConfig{
		Targets:    map[string]string{"Echo": "svc.local:9000"},
		LookupHost: f.lookupHost,
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := d.Resolve(context.Background(), "Echo")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.1:9000", "10.0.0.2:9000", "[fd00::1]:9000"}
	if got := addrs(list); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("Resolve = %v, want %v (sorted, duplicates dropped)", got, want)
	}
	// A service without a target is looked up under its own name.
	f.set("other.local", "10.1.1.1")
	if list, err := d.Resolve(context.Background(), "other.local:7"); err != nil || addrs(list)[0] != "10.1.1.1:7" {
		t.Fatalf("Resolve(own name) = %v, %v", list, err)
	}
	_, err = d.Resolve(context.Background(), "missing.local:1")
	var de *discovery.DNSError
	var ne *net.DNSError
	if !errors.As(err, &de) || de.Target != "missing.local:1" || !errors.As(err, &ne) {
		t.Fatalf("unknown host: %v", err)
	}
	if _, err := d.Resolve(context.Background(), "no-port"); err == nil {
		t.Fatal("a target without a port resolved")
	}
}

func TestDNSLocalhost(t *testing.T) {
	d, err := discovery.NewDNS(discovery.DNSConfig{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := d.Resolve(context.Background(), "localhost:8888")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("localhost resolved to nothing")
	}
	for _, in := range list {
		host, port, err := net.SplitHostPort(in.Address)
		if err != nil || port != "8888" || !net.ParseIP(host).IsLoopback() {
			t.Errorf("localhost instance %q", in.Address)
		}
	}
}

func TestDNSSRV(t *testing.T) {
	f := newFake()
	f.srv["_echo._tcp.example"] = []*net.SRV{
		{Target: "a.example.", Port: 1, Priority: 10, Weight: 5},
		{Target: "b.example.", Port: 2, Priority: 10, Weight: 0},
		{Target: "backup.example.", Port: 3, Priority: 20, Weight: 100},
		nil,
	}
	d, _ := discovery.NewDNS(discovery.DNSConfig{SRV: true, LookupSRV: f.lookupSRV})
	list, err := d.Resolve(context.Background(), "_echo._tcp.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Address != "a.example:1" || list[0].Weight != 5 || list[1].Address != "b.example:2" || list[1].Weight != 1 {
		t.Fatalf("SRV instances = %+v", list)
	}
}

func TestDNSWatchRefresh(t *testing.T) {
	f := newFake()
	f.set("svc", "10.0.0.1")
	t.Cleanup(discovery.SetMinDNSRefresh(time.Millisecond))
	w := watchSvc(t, discovery.DNSConfig{Refresh: 5 * time.Millisecond, LookupHost: f.lookupHost})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := w.Next(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("first Next = %v, %v", list, err)
	}
	// Unchanged lookups are not reported: Next keeps waiting.
	short, cancelShort := context.WithTimeout(ctx, 40*time.Millisecond)
	_, err = w.Next(short)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next without a change = %v", err)
	}
	if n := f.count(); n < 3 {
		t.Fatalf("%d lookups in 40ms with a 5ms refresh", n)
	}
	// A failed lookup is reported and transient.
	f.fail(errors.New("server misbehaving"))
	if _, err := w.Next(ctx); err == nil {
		t.Fatal("a failing lookup was not reported")
	}
	f.fail(nil)
	f.set("svc", "10.0.0.1", "10.0.0.9")
	list, err = w.Next(ctx)
	if err != nil || len(list) != 2 || list[1].Address != "10.0.0.9:1" {
		t.Fatalf("Next after a change = %v, %v", list, err)
	}
	w.Close()
	if _, err := w.Next(ctx); !errors.Is(err, discovery.ErrWatcherClosed) {
		t.Fatalf("Next after Close = %v", err)
	}
}

func TestDNSConfigValidate(t *testing.T) {
	for _, r := range []time.Duration{-1, 1, discovery.MinDNSRefresh - 1} {
		if _, err := discovery.NewDNS(discovery.DNSConfig{Refresh: r}); err == nil {
			t.Fatalf("refresh %v accepted", r)
		}
	}
	if _, err := discovery.NewDNS(discovery.DNSConfig{Refresh: discovery.MinDNSRefresh}); err != nil {
		t.Fatal(err)
	}
	c := discovery.DefaultDNSConfig()
	if err := c.Validate(); err != nil || c.Refresh != discovery.DefaultDNSRefresh {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
}

// TestDNSCloseEndsLookup: Close ends a Next waiting on a lookup (a slow DNS
// server), as it ends one waiting for the next refresh.
func TestDNSCloseEndsLookup(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{}) // frees the lookup if Close did not
	defer close(release)
	slow := func(ctx context.Context, host string) ([]string, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return []string{"10.0.0.1"}, nil
		}
	}
	d, err := discovery.NewDNS(discovery.DNSConfig{LookupHost: slow})
	if err != nil {
		t.Fatal(err)
	}
	w, err := d.Watch(context.Background(), "svc:1")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Next(context.Background())
		done <- err
	}()
	<-started
	w.Close()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if !errors.Is(err, discovery.ErrWatcherClosed) {
			t.Fatalf("Next closed during its lookup = %v, want ErrWatcherClosed", err)
		}
	case <-timer.C:
		release <- struct{}{}
		<-done
		t.Fatal("Close did not end a Next waiting on its lookup in 5 s")
	}
}

// TestDNSRetryAfterFailure: a lookup that fails (at start-up here) is tried
// again after MinDNSRefresh, doubling at each failure in a row, not after a
// whole Refresh.
func TestDNSRetryAfterFailure(t *testing.T) {
	f := newFake()
	f.set("svc", "10.0.0.1")
	f.fail(errors.New("server misbehaving"))
	t.Cleanup(discovery.SetMinDNSRefresh(20 * time.Millisecond))
	w := watchSvc(t, discovery.DNSConfig{Refresh: time.Hour, LookupHost: f.lookupHost})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	for i := range 3 { // waits 0, 20 and 40 ms before the lookups
		if _, err := w.Next(ctx); err == nil || ctx.Err() != nil {
			t.Fatalf("lookup %d: %v, want the lookup's error", i, err)
		}
	}
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Fatalf("3 failed lookups in %v: the retries did not back off (want 20 + 40 ms between them)", el)
	}
	f.fail(nil)
	list, err := w.Next(ctx) // after 80 ms
	if err != nil || len(list) != 1 || list[0].Address != "10.0.0.1:1" {
		t.Fatalf("Next once the lookup works again = %v, %v (Refresh is an hour)", list, err)
	}
	if n := f.count(); n != 4 {
		t.Fatalf("%d lookups, want 4", n)
	}
}

// watchSvc watches "svc:1" with a DNS resolver of cfg; the test's end
// closes the watcher.
func watchSvc(t *testing.T, cfg discovery.DNSConfig) discovery.Watcher {
	t.Helper()
	d, err := discovery.NewDNS(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := d.Watch(context.Background(), "svc:1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}
