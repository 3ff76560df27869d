package client_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/loadbalance"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
)

// waitFor polls cond every 5ms for up to 3s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestResolverRemovesInstance: a client with a static resolver of three
// Petrel servers; after one is removed from the resolver no call reaches
// it, the client's connections to it are closed (as the servers and the
// client's PoolStats both count) and its instance breaker is dropped;
// after it is back, calls reach it again.
func TestResolverRemovesInstance(t *testing.T) {
	for _, pool := range longAndMux(2) {
		t.Run(pool.name, func(t *testing.T) {
			var srvs [3]*server.Server
			var addrs [3]string
			for i := range srvs {
				srvs[i], addrs[i] = startPetrel(t)
			}
			r := discovery.NewStaticAddrs(addrs[:]...)
			g, err := circuitbreak.NewGroup(circuitbreak.Config{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := client.New("Echo", client.WithResolver(r), pool.opt, client.WithInstanceBreaker(g))
			if err != nil {
				t.Fatal(err)
			}
			// The client's count of open connections matches the servers'.
			checkPool := func(when string, addresses int) {
				t.Helper()
				var conns int64
				for _, s := range srvs {
					conns += s.Stats().Connections
				}
				st := c.PoolStats()
				if int64(st.Open) != conns || st.Addresses != addresses || (pool.name == "long" && st.Idle != st.Open) {
					t.Fatalf("%s: PoolStats %+v; the servers count %d connections, want %d addresses", when, st, conns, addresses)
				}
				t.Logf("%s: PoolStats %+v", when, st)
			}
			defer c.Close()
			ctx := context.Background()
			calls := func(n int) {
				t.Helper()
				for i := range n {
					if _, err := echo(ctx, c, &echoArgs{Msg: []byte("hi")}); err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
				}
			}
			calls(30)
			for i, s := range srvs {
				if got := s.Stats().Requests; got != 10 {
					t.Fatalf("server %d got %d of 30 round-robin calls, want 10", i, got)
				}
				if s.Stats().Connections == 0 {
					t.Fatalf("server %d has no connection from the client", i)
				}
			}
			checkPool("3 instances", 3)
			if g.Len() != 3 {
				t.Fatalf("%d instance breakers for 3 instances", g.Len())
			}

			r.Set(discovery.Instance{Address: addrs[0]}, discovery.Instance{Address: addrs[1]})
			waitFor(t, "the removed server's connections to close", func() bool {
				return srvs[2].Stats().Connections == 0
			})
			before := [3]int64{srvs[0].Stats().Requests, srvs[1].Stats().Requests, srvs[2].Stats().Requests}
			calls(40)
			if got := srvs[2].Stats().Requests; got != before[2] {
				t.Fatalf("the removed server got %d calls after its removal", got-before[2])
			}
			if got := srvs[0].Stats().Requests + srvs[1].Stats().Requests - before[0] - before[1]; got != 40 {
				t.Fatalf("the remaining servers got %d of 40 calls", got)
			}
			if n := srvs[2].Stats().Connections; n != 0 {
				t.Fatalf("the removed server has %d connections again", n)
			}
			if idle := client.IdleConns(c, addrs[2]); len(idle) != 0 {
				t.Fatalf("the long pool keeps %d connections to the removed server", len(idle))
			}
			checkPool("one removed", 2)
			if g.Lookup(addrs[2]) != nil || g.Len() != 2 {
				t.Fatalf("the removed instance's breaker is kept (%d breakers)", g.Len())
			}

			r.Set(discovery.Instance{Address: addrs[0]}, discovery.Instance{Address: addrs[1]}, discovery.Instance{Address: addrs[2]})
			waitFor(t, "calls to reach the server added back", func() bool {
				calls(3)
				return srvs[2].Stats().Requests > before[2]
			})
			c.Close()
			if st := c.PoolStats(); st.Open != 0 || st.Idle != 0 {
				t.Fatalf("after Close: PoolStats %+v", st)
			}
		})
	}
}

// TestInstanceBreakersUnderChurn: instances come and go through the
// resolver (50 short-lived addresses that refuse connections, beside one
// live server); the instance breaker group never holds more than the
// current instances.
func TestInstanceBreakersUnderChurn(t *testing.T) {
	_, live := startPetrel(t)
	r := discovery.NewStaticAddrs(live)
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 2, OpenFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New("Echo", client.WithResolver(r), client.WithInstanceBreaker(g), client.WithConnectTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	prev := ""
	used := map[string]bool{live: true}
	for i := range 50 {
		gone := deadAddr(t)
		for used[gone] {
			gone = deadAddr(t)
		}
		used[gone] = true
		r.Set(discovery.Instance{Address: live}, discovery.Instance{Address: gone})
		if prev != "" {
			waitFor(t, "the previous address's breaker to go", func() bool { return g.Lookup(prev) == nil })
		}
		// Calls until the new address has a breaker (round robin reaches it).
		waitFor(t, "a call to the new address", func() bool {
			echo(ctx, c, &echoArgs{})
			return g.Lookup(gone) != nil
		})
		if n := g.Len(); n > 2 {
			t.Fatalf("round %d: %d breakers for 2 instances", i, n)
		}
		prev = gone
	}
	r.Set(discovery.Instance{Address: live})
	waitFor(t, "the last churned address's breaker to go", func() bool { return g.Len() == 1 })
	if g.Lookup(live) == nil {
		t.Fatal("the live instance lost its breaker")
	}
}

// TestResolverRemovalDuringCalls: removing an instance while a call to it
// is in flight lets it finish; then the connection it used is closed (the
// multiplexed one drains, the long pool's is closed when given back).
func TestResolverRemovalDuringCalls(t *testing.T) {
	for _, pool := range longAndMux(1) {
		t.Run(pool.name, func(t *testing.T) {
			s1, a1 := startPetrel(t)
			_, a2 := startPetrel(t)
			r := discovery.NewStaticAddrs(a1)
			c, err := client.New("Echo", client.WithResolver(r), pool.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if _, err := echo(ctx, c, &echoArgs{}); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := echo(ctx, c, &echoArgs{SleepMs: 150, Msg: []byte("slow")})
				done <- err
			}()
			waitFor(t, "the slow call to reach the server", func() bool { return s1.Stats().Requests == 2 })
			r.Set(discovery.Instance{Address: a2})
			if err := <-done; err != nil {
				t.Fatalf("the call in flight during the removal: %v", err)
			}
			waitFor(t, "the connection to the removed server to close", func() bool { return s1.Stats().Connections == 0 })
			if _, err := echo(ctx, c, &echoArgs{}); err != nil {
				t.Fatal(err)
			}
			if s1.Stats().Requests != 2 {
				t.Fatal("a call went to the removed server")
			}
			// The server may count the connection closed before the
			// client's reader of it has exited and left PoolStats.
			waitFor(t, "PoolStats to count one connection to the remaining server", func() bool {
				st := c.PoolStats()
				return st.Open == 1 && st.Addresses == 1
			})
		})
	}
}

func TestConsistentHashKey(t *testing.T) {
	var srvs [3]*server.Server
	var addrs [3]string
	for i := range srvs {
		srvs[i], addrs[i] = startPetrel(t)
	}
	lb, err := loadbalance.NewConsistentHash(loadbalance.ConsistentHashConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New("Echo", client.WithHostPorts(addrs[:]...), client.WithLoadBalancer(lb))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	// Each key's 5 calls land on one server.
	for _, key := range []string{"alice", "bob", "carol", "dave"} {
		var before [3]int64
		for i, s := range srvs {
			before[i] = s.Stats().Requests
		}
		for range 5 {
			if _, err := echo(ctx, c, &echoArgs{}, client.WithHashKey(key)); err != nil {
				t.Fatal(err)
			}
		}
		hit := 0
		for i, s := range srvs {
			switch s.Stats().Requests - before[i] {
			case 0:
			case 5:
				hit++
			default:
				t.Fatalf("key %s: its calls went to several servers", key)
			}
		}
		if hit != 1 {
			t.Fatalf("key %s: %d servers got all its calls", key, hit)
		}
	}
}

// countingBalancer wraps P2C and counts the feedback calls.
type countingBalancer struct {
	*loadbalance.P2C
	done atomic.Int64
	errs atomic.Int64
}

func (b *countingBalancer) Done(addr string, latency time.Duration, err error) {
	b.done.Add(1)
	if err != nil {
		b.errs.Add(1)
	}
	b.P2C.Done(addr, latency, err)
}

func TestLoadBalancerFeedback(t *testing.T) {
	_, a1 := startPetrel(t)
	p2c, err := loadbalance.NewP2C(loadbalance.P2CConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lb := &countingBalancer{P2C: p2c}
	c, err := client.New("Echo", client.WithHostPorts(a1), client.WithLoadBalancer(lb))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 5 {
		if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := echo(context.Background(), c, &echoArgs{Mode: modeAppError}); err == nil {
		t.Fatal("the failing call succeeded")
	}
	if lb.done.Load() != 6 || lb.errs.Load() != 1 {
		t.Fatalf("feedback: %d Done, %d errors; want 6 and 1", lb.done.Load(), lb.errs.Load())
	}
}

// failingResolver fails every Watch.
type failingResolver struct{ calls atomic.Int32 }

var errNoRegistry = errors.New("registry unreachable")

func (f *failingResolver) Resolve(context.Context, string) ([]discovery.Instance, error) {
	return nil, errNoRegistry
}

func (f *failingResolver) Watch(context.Context, string) (discovery.Watcher, error) {
	f.calls.Add(1)
	return nil, errNoRegistry
}

func TestResolverFailure(t *testing.T) {
	f := &failingResolver{}
	c, err := client.New("Echo", client.WithResolver(f))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = echo(context.Background(), c, &echoArgs{})
	if rpcerr.CodeOf(err) != rpcerr.Connection || !errors.Is(err, errNoRegistry) || !errors.Is(err, loadbalance.ErrNoInstance) {
		t.Fatalf("call without instances: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("the call waited %v for a failing resolver", d)
	}
}

func TestResolverEmptyAndWaiting(t *testing.T) {
	r := discovery.NewStatic()
	c, err := client.New("Echo", client.WithResolver(r))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = echo(context.Background(), c, &echoArgs{})
	if !errors.Is(err, loadbalance.ErrNoInstance) {
		t.Fatalf("a call with no instance: %v", err)
	}
	_, addr := startPetrel(t)
	r.Set(discovery.Instance{Address: addr})
	waitFor(t, "the instance to be picked", func() bool {
		_, err := echo(context.Background(), c, &echoArgs{})
		return err == nil
	})
}

func TestDiscoveryOptionErrors(t *testing.T) {
	if _, err := client.New("Echo", client.WithResolver(nil)); err == nil {
		t.Error("a nil resolver was accepted")
	}
	if _, err := client.New("Echo", client.WithHostPorts("x:1"), client.WithLoadBalancer(nil)); err == nil {
		t.Error("a nil balancer was accepted")
	}
	if _, err := client.New("Echo", client.WithLoadBalancer(loadbalance.NewWeightedRandom())); err == nil {
		t.Error("a balancer without addresses or resolver was accepted")
	}
}

// stuckResolver's watchers never report.
type stuckResolver struct{}

func (stuckResolver) Resolve(ctx context.Context, _ string) ([]discovery.Instance, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (stuckResolver) Watch(context.Context, string) (discovery.Watcher, error) {
	return stuckWatcher{}, nil
}

type stuckWatcher struct{}

func (stuckWatcher) Next(ctx context.Context) ([]discovery.Instance, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (stuckWatcher) Close() error { return nil }

func TestFirstResolutionBoundedByDeadline(t *testing.T) {
	c, err := client.New("Echo", client.WithResolver(stuckResolver{}))
	if err != nil {
		t.Fatal(err)
	}
	// The call's deadline, its own or its context's, passing first is a
	// timeout (net.Error with Timeout true); a cancellation is Canceled.
	start := time.Now()
	_, err = echo(context.Background(), c, &echoArgs{}, client.WithCallTimeout(50*time.Millisecond))
	if d := time.Since(start); err == nil || d < 40*time.Millisecond || d > time.Second {
		t.Fatalf("call before any resolution: %v after %v", err, d)
	}
	var ne net.Error
	if rpcerr.CodeOf(err) != rpcerr.Timeout || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("call timed out before any resolution: code %v: %v", rpcerr.CodeOf(err), err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	if _, err := echo(dctx, c, &echoArgs{}, client.WithCallTimeout(0)); rpcerr.CodeOf(err) != rpcerr.Timeout {
		t.Fatalf("context deadline passed before any resolution: code %v: %v", rpcerr.CodeOf(err), err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	if _, err := echo(cctx, c, &echoArgs{}, client.WithCallTimeout(0)); rpcerr.CodeOf(err) != rpcerr.Canceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled call before any resolution: %v", err)
	}
	// Close wakes a call waiting without a deadline for the first
	// resolution.
	done := make(chan error, 1)
	go func() {
		_, err := echo(context.Background(), c, &echoArgs{}, client.WithCallTimeout(0))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close() // stops the watching goroutine (goleak checks)
	limit := time.NewTimer(3 * time.Second)
	defer limit.Stop()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a call with no instance succeeded")
		}
	case <-limit.C:
		t.Fatal("Close left a call waiting on the first resolution")
	}
}

// BenchmarkCallBalanced is BenchmarkCall (Petrel's server in a child
// process) with a balancer over a resolver: the allocations per call must
// stay those of the static round robin.
func BenchmarkCallBalanced(b *testing.B) {
	addr := startServerProcess(b, "petrel")
	for _, s := range []setup{benchSetups()[0], benchSetups()[3]} {
		for _, name := range []string{"static", "wrr", "consistent", "p2c"} {
			b.Run(s.name+"/"+name, func(b *testing.B) {
				var opts []client.Option
				var callOpts []client.CallOption
				switch name {
				case "wrr":
					opts = append(opts, client.WithResolver(discovery.NewStaticAddrs(addr)))
				case "consistent":
					lb, _ := loadbalance.NewConsistentHash(loadbalance.ConsistentHashConfig{})
					opts = append(opts, client.WithLoadBalancer(lb))
					callOpts = append(callOpts, client.WithHashKey("user-42"))
				case "p2c":
					lb, _ := loadbalance.NewP2C(loadbalance.P2CConfig{})
					opts = append(opts, client.WithLoadBalancer(lb))
				}
				c := newClient(b, addr, s, opts...)
				args := &echoArgs{Msg: []byte("hello, petrel")}
				res := &echoResult{Success: make([]byte, 0, 64)}
				ctx := context.Background()
				for range 100 {
					if err := c.Call(ctx, "echo", false, args, res, callOpts...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := c.Call(ctx, "echo", false, args, res, callOpts...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// memRegistry is a registry in memory whose Static resolver lists what is
// registered.
type memRegistry struct {
	mu    sync.Mutex
	insts map[string]discovery.Instance // guarded by mu
	res   *discovery.Static
}

func newMemRegistry() *memRegistry {
	return &memRegistry{insts: map[string]discovery.Instance{}, res: discovery.NewStatic()}
}

func (m *memRegistry) publish() {
	list := make([]discovery.Instance, 0, len(m.insts))
	for _, in := range m.insts {
		list = append(list, in)
	}
	m.res.Set(list...)
}

func (m *memRegistry) Register(_ context.Context, _ string, inst discovery.Instance) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.insts[inst.Address] = inst
	m.publish()
	return nil
}

func (m *memRegistry) Deregister(_ context.Context, _ string, inst discovery.Instance) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.insts, inst.Address)
	m.publish()
	return nil
}

// TestRegistryToResolver: servers register themselves; a client finds
// them through the registry; a server stopping gracefully deregisters
// first, and while callers keep calling the client stops sending to it.
// With a deregistration grace period (long pool) no call fails at all.
// Without one (mux pool), calls that picked the server just before the
// client's update may be refused as shutting down, or by the pool without
// being sent: the only errors allowed.
func TestRegistryToResolver(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pool        client.Option
		grace       time.Duration
		allowRefuse bool
	}{
		{"long/grace", client.WithLongConnection(client.LongPoolConfig{}), 50 * time.Millisecond, false},
		{"mux/no-grace", client.WithMuxConnection(1), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newMemRegistry()
			var srvs [3]*server.Server
			for i := range srvs {
				srvs[i], _ = startPetrel(t, server.WithRegistry(reg, discovery.Instance{}), server.WithDeregisterGrace(tc.grace))
			}
			c, err := client.New("Echo", client.WithResolver(reg.res), tc.pool)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			waitFor(t, "every server to be called", func() bool {
				// The servers register as they start: at first there may be none.
				if _, err := echo(ctx, c, &echoArgs{}); err != nil && !errors.Is(err, loadbalance.ErrNoInstance) {
					t.Fatal(err)
				}
				return srvs[0].Stats().Requests > 0 && srvs[1].Stats().Requests > 0 && srvs[2].Stats().Requests > 0
			})
			var calls, refused atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						_, err := echo(ctx, c, &echoArgs{})
						calls.Add(1)
						switch {
						case err == nil:
						case tc.allowRefuse && (rpcerr.CodeOf(err) == rpcerr.ShuttingDown || retry.NotSent(err)):
							refused.Add(1)
						default:
							t.Errorf("call during the stop: %v", err)
							return
						}
					}
				})
			}
			time.Sleep(20 * time.Millisecond)
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := srvs[2].Stop(sctx); err != nil {
				t.Fatal(err)
			}
			n := srvs[2].Stats().Requests
			before := calls.Load()
			time.Sleep(30 * time.Millisecond)
			close(stop)
			wg.Wait()
			if srvs[2].Stats().Requests != n {
				t.Fatal("calls reached the stopped server")
			}
			t.Logf("%d calls, %d refused (shutting down or not sent), %d after the stop", calls.Load(), refused.Load(), calls.Load()-before)
			if calls.Load()-before == 0 {
				t.Fatal("no call was made after the stop")
			}
		})
	}
}

// stickyBalancer always picks one address, listed or not (a pick made
// just before an update, frozen).
type stickyBalancer struct{ addr string }

func (b stickyBalancer) Update([]discovery.Instance) {}

func (b stickyBalancer) Pick(context.Context, string) (discovery.Instance, error) {
	return discovery.Instance{Address: b.addr}, nil
}

// TestStalePickOfRemovedInstance: a call to an address the resolver no
// longer lists is refused unsent by the mux pool; the long pool runs it
// and closes its connection afterwards.
func TestStalePickOfRemovedInstance(t *testing.T) {
	srv, gone := startPetrel(t)
	_, other := startPetrel(t)
	r := discovery.NewStaticAddrs(other)
	ctx := context.Background()

	mux, err := client.New("Echo", client.WithResolver(r), client.WithLoadBalancer(stickyBalancer{gone}), client.WithMuxConnection(1))
	if err != nil {
		t.Fatal(err)
	}
	defer mux.Close()
	waitFor(t, "the mux pool to refuse the unlisted address", func() bool {
		_, err := echo(ctx, mux, &echoArgs{})
		return err != nil
	})
	_, err = echo(ctx, mux, &echoArgs{})
	if rpcerr.CodeOf(err) != rpcerr.Connection || !retry.NotSent(err) || !strings.Contains(err.Error(), "left") {
		t.Fatalf("mux call to an unlisted address: %v", err)
	}

	long, err := client.New("Echo", client.WithResolver(r), client.WithLoadBalancer(stickyBalancer{gone}))
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	if _, err := echo(ctx, long, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	if idle := client.IdleConns(long, gone); len(idle) != 0 {
		t.Fatalf("the long pool kept %d connections to an unlisted address", len(idle))
	}
	waitFor(t, "the server to see the connection closed", func() bool { return srv.Stats().Connections == 0 })
}
