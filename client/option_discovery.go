package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/loadbalance"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// discConfig is what WithResolver and WithLoadBalancer set.
type discConfig struct {
	resolver discovery.Resolver   // nil: a static list of WithHostPorts
	balancer loadbalance.Balancer // nil: smooth weighted round robin
}

func (d *discConfig) used() bool { return d.resolver != nil || d.balancer != nil }

// WithResolver makes the client find its servers with r: the client
// watches the instances of its service (the name given to New) and sends
// each call to the instance its balancer picks (WithLoadBalancer; default
// smooth weighted round robin, which is plain round robin over equal
// weights). When an instance leaves, the client's pooled connections to it
// are closed (the multiplexed pool's once their calls are answered). The
// first calls wait for the first resolution, within their deadline; while
// a resolution fails the client keeps the instances it had. Default: none,
// the static round robin over WithHostPorts; New fails if both are given.
func WithResolver(r discovery.Resolver) Option {
	return optionFunc(func(c *config) {
		if r == nil {
			c.fail(errors.New("client: WithResolver got a nil Resolver"))
			return
		}
		c.disc.resolver = r
	})
}

// WithLoadBalancer makes b choose the instance of each call among those of
// WithResolver (or of WithHostPorts, each with the default weight). b must
// serve this client alone. A balancer implementing loadbalance.Feedback
// (P2C) is told each call's latency and error. Default: round robin
// (loadbalance.NewWeightedRoundRobin with WithResolver; the static round
// robin over WithHostPorts without).
func WithLoadBalancer(b loadbalance.Balancer) Option {
	return optionFunc(func(c *config) {
		if b == nil {
			c.fail(errors.New("client: WithLoadBalancer got a nil Balancer"))
			return
		}
		c.disc.balancer = b
	})
}

// hashKey is the CallOption of WithHashKey.
type hashKey string

func (k hashKey) applyCall(c *callConfig) { c.hashKey = string(k) }

// WithHashKey gives the call a key for key-aware balancers
// (loadbalance.NewConsistentHash): calls with the same key go to the same
// instance while it stays. Other balancers ignore it. Default: none (a
// consistent-hash balancer then picks at random).
func WithHashKey(key string) CallOption { return hashKey(key) }

// discoveryResolver picks each call's instance with a balancer fed by a
// resolver's watcher, which a goroutine of the client follows.
type discoveryResolver struct {
	service string
	r       discovery.Resolver
	lb      loadbalance.Balancer
	retain  func(live map[string]struct{}) // the pools close the rest

	// breakers are WithInstanceBreaker's (nil: none). The breaker of an
	// address that leaves is removed, and none is made for an address not
	// in live, so that instance churn does not grow the group.
	breakers *circuitbreak.Group
	brMu     sync.Mutex
	live     map[string]struct{} // guarded by brMu: the addresses last resolved; nil before

	ready     chan struct{} // closed after the first resolution, even a failed one
	readyOnce sync.Once
	lastErr   atomic.Pointer[error] // the last resolution error; nil after a success
	cancel    context.CancelFunc
	done      chan struct{} // closed when the watching goroutine exits
}

// watchBackoff is the pause after a failed Watch or Next.
const watchBackoff = 200 * time.Millisecond

func newDiscoveryResolver(service string, cfg *discConfig, addrs []string, retain func(map[string]struct{}), breakers *circuitbreak.Group) (*discoveryResolver, error) {
	r, lb := cfg.resolver, cfg.balancer
	if r == nil {
		if len(addrs) == 0 {
			return nil, errors.New("client: no server address; use WithHostPorts or WithResolver")
		}
		r = discovery.NewStaticAddrs(addrs...)
	}
	if lb == nil {
		lb = loadbalance.NewWeightedRoundRobin()
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &discoveryResolver{
		service: service, r: r, lb: lb, retain: retain, breakers: breakers,
		ready: make(chan struct{}), cancel: cancel, done: make(chan struct{}),
	}
	go d.run(ctx)
	return d, nil
}

// run follows the resolver until stop.
func (d *discoveryResolver) run(ctx context.Context) {
	defer close(d.done)
	var w discovery.Watcher
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	pause := time.NewTimer(farFuture)
	pause.Stop()
	defer pause.Stop()
	for ctx.Err() == nil {
		var err error
		if w == nil {
			if w, err = d.r.Watch(ctx, d.service); err == nil && w == nil {
				err = errors.New("client: the resolver's Watch of " + d.service + " returned no Watcher and no error")
			}
		}
		var list []discovery.Instance
		if err == nil {
			list, err = w.Next(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if errors.Is(err, discovery.ErrWatcherClosed) {
				w = nil
			}
			d.lastErr.Store(&err)
			d.readyOnce.Do(func() { close(d.ready) })
			pause.Reset(watchBackoff)
			select {
			case <-pause.C:
			case <-ctx.Done():
				return
			}
			continue
		}
		live := make(map[string]struct{}, len(list))
		for _, in := range list {
			live[in.Address] = struct{}{}
		}
		// The pools learn the new addresses before the balancer can
		// pick them.
		d.retain(live)
		d.retainBreakers(live)
		d.lb.Update(list)
		d.lastErr.Store(nil)
		d.readyOnce.Do(func() { close(d.ready) })
	}
}

// retainBreakers removes the instance breakers of the addresses that left.
func (d *discoveryResolver) retainBreakers(live map[string]struct{}) {
	if d.breakers == nil {
		return
	}
	d.brMu.Lock()
	defer d.brMu.Unlock()
	for addr := range d.live {
		if _, ok := live[addr]; !ok {
			d.breakers.Remove(addr)
		}
	}
	d.live = live
}

// breaker returns addr's instance breaker, made on first use, or nil when
// addr is no longer resolved (a call that picked it just as it left goes
// without one rather than make a breaker nobody removes).
func (d *discoveryResolver) breaker(addr string) *circuitbreak.Breaker {
	d.brMu.Lock()
	defer d.brMu.Unlock()
	if _, ok := d.live[addr]; !ok && d.live != nil {
		return nil
	}
	return d.breakers.Get(addr)
}

// stop ends the watch and waits for the goroutine. Calls still waiting
// for the first resolution then fail.
func (d *discoveryResolver) stop() {
	d.cancel()
	<-d.done
	if d.lastErr.Load() == nil {
		var err error = errClientClosed
		d.lastErr.Store(&err)
	}
	d.readyOnce.Do(func() { close(d.ready) })
}

func (d *discoveryResolver) pick(ctx context.Context, cs *callState, deadline time.Time) (string, error) {
	select {
	case <-d.ready:
	default:
		if err := d.waitReady(ctx, deadline); err != nil {
			return "", err
		}
	}
	in, err := d.lb.Pick(ctx, cs.cc.hashKey)
	if err != nil {
		if last := d.lastErr.Load(); last != nil {
			return "", errors.Join(err, *last)
		}
		return "", err
	}
	return in.Address, nil
}

// waitReady waits for the first resolution while ctx is live and until
// deadline (zero: none), the attempt's: a middleware's context or a retry
// policy's AttemptTimeout may end it before the call's.
func (d *discoveryResolver) waitReady(ctx context.Context, deadline time.Time) error {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-d.ready:
		return nil
	case <-ctx.Done():
		return ctxError(ctx.Err(), "waiting for the first resolution of "+d.service)
	case <-timeout:
		return errResolveDeadline
	}
}

// errResolveDeadline: the attempt's deadline passed while waiting for the
// first resolution; Client.pick says whose deadline it was.
var errResolveDeadline = errors.New("the deadline passed before the first resolution")

// retain closes the idle connections of the long pool to addresses not in
// live, and those given back later. (A call that picked such an address
// just before the change still runs.)
func (p *longPool) retain(live map[string]struct{}) {
	var gone []*pconn
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.live = live
	for addr, list := range p.idle {
		if _, ok := live[addr]; !ok {
			gone = append(gone, list...)
			delete(p.idle, addr)
		}
	}
	p.nidle -= len(gone)
	p.mu.Unlock()
	for _, pc := range gone {
		p.discard(pc)
	}
}

func (p *shortPool) retain(map[string]struct{}) {}

// retain drains the multiplexed connections to addresses not in live: they
// take no new call and close once their calls are answered. A call that
// picked such an address before the balancer's update fails, not sent,
// rather than dial it again.
func (p *muxPool) retain(live map[string]struct{}) {
	var gone []*muxSlots
	p.mu.Lock()
	p.kept = live
	for addr, s := range p.addrs {
		if _, ok := live[addr]; !ok {
			gone = append(gone, s)
			delete(p.addrs, addr)
		}
	}
	p.mu.Unlock()
	for _, s := range gone {
		for i := range s.conns {
			if mc := s.conns[i].Load(); mc != nil {
				mc.drain()
			}
		}
	}
}

// useDiscovery replaces the static round robin with a balancer over a
// resolver (New, once the pools exist).
func (c *Client) useDiscovery() error {
	retain := func(live map[string]struct{}) {
		if c.mux != nil {
			c.mux.retain(live)
		} else {
			c.pool.retain(live)
		}
	}
	d, err := newDiscoveryResolver(c.service, &c.cfg.disc, c.cfg.addrs, retain, c.cfg.gov.instances)
	if err != nil {
		return err
	}
	c.res = d
	c.fb, _ = d.lb.(loadbalance.Feedback)
	return nil
}

// left reports whether discovery no longer lists addr; p.mu is held.
func (p *muxPool) left(addr string) bool {
	_, ok := p.kept[addr]
	return !ok && p.kept != nil
}

// instanceLeft is the error of a call whose address discovery no longer
// lists (it picked it just before the update).
func instanceLeft(addr string) error {
	return rpcerr.New(rpcerr.Connection, "client: "+addr+" left the service's instances")
}
