// Package etcd keeps Petrel services' instances in etcd
// (go.etcd.io/etcd/client/v3): [Registry] implements discovery.Registry
// for servers and [Resolver] implements discovery.Resolver for clients.
//
// Each instance is one key, Prefix + service + "/" + address, whose value is
// the instance as JSON ({"address", "weight", "tags"}). A service name may
// not hold "/" (the Registry and the Resolver refuse it): the name ends at
// the first "/" after the prefix, so that a service's keys are not also
// under another service's (those of "a/b" under "a"'s). An address may
// hold "/". A Registry attaches
// its keys to one lease that it keeps alive while it holds an instance. A
// Resolver's Watcher follows the keys with an etcd watch, so changes reach
// clients as soon as etcd has them.
//
// # How fast an instance leaves
//
// A graceful Deregister (or Close, which revokes the lease) deletes the keys
// at once: watchers see the instance go within milliseconds.
//
// A process that dies without deregistering (a crash, a kill, a lost
// network) stops renewing its lease, and etcd deletes its keys when the lease
// expires. [Config.TTL] is the bound a user gets for that: the instances of
// a dead process stay visible to watchers at most TTL after its last
// keep-alive reached etcd, hence at most TTL after the crash. To keep that
// promise the Registry asks etcd for a lease shorter than TTL, by
// [ExpiryAllowance] (1 s), rounded down to whole seconds (etcd's unit):
// 2 s for a TTL of 3 s, 9 s for the default 10 s. The second left covers
// what happens after the lease's expiry: etcd's lessor looks for expired
// leases every 500 ms, then commits the lease's revocation through raft and
// sends the deletions to watchers (milliseconds on a healthy cluster). So
// TTL must be at least 2 s. The etcd client renews the lease once a third
// of its TTL has passed, checking on 500 ms ticks (every 1 s for a 2 s
// lease), so a crash leaves the instances visible for between the lease
// minus that interval and TTL. Measured with
// a SIGKILLed process, TTL 3 s (lease 2 s) and a local etcd
// (TestCrashRemoval): gone at a watcher 1.5 s to 2.3 s after the kill.
//
// etcd may grant a longer lease than asked: its minimum is 1.5 election
// timeouts, rounded up to seconds (2 s with etcd's default 1 s election
// timeout). Register then fails with an error wrapping [ErrTTLTooShort]
// rather than promise a bound it cannot keep; raise TTL (to 3 s for a default
// etcd). The bound assumes a steady etcd leader: a newly elected leader
// extends every lease by an election timeout (so that keep-alives sent to
// the old one are not lost), and etcd revokes at most 1000 expired leases a
// second.
//
// Problems the packages recover from by themselves (a lost lease, a
// watch compacted away, an undecodable value) are logged through log/slog.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/petrel-rpc/petrel/contrib/etcd/internal/record"
	"github.com/petrel-rpc/petrel/discovery"
)

// Defaults of Config.
const (
	// DefaultPrefix is where the instances' keys live.
	DefaultPrefix = "/petrel/services/"
	// DefaultTTL is how long, at most, the instances of a process that
	// died stay visible (see Config.TTL).
	DefaultTTL = 10 * time.Second
	// ExpiryAllowance is what a Registry leaves, out of Config.TTL, for
	// etcd to notice an expired lease (its lessor looks every 500 ms),
	// commit the revocation and tell watchers: the lease it asks for is
	// TTL minus ExpiryAllowance, rounded down to whole seconds.
	ExpiryAllowance = time.Second
	// MinTTL is the shortest Config.TTL: a lease of 1 s (etcd's shortest)
	// plus ExpiryAllowance.
	MinTTL = time.Second + ExpiryAllowance
)

// ErrTTLTooShort is wrapped by the error of a Register whose lease etcd
// granted longer than Config.TTL allows (etcd's minimum lease TTL is 1.5
// election timeouts, rounded up to seconds).
var ErrTTLTooShort = errors.New("etcd: Config.TTL is too short for this etcd's minimum lease")

// Config configures a Registry or a Resolver. Zero fields take their
// defaults; Client is required.
type Config struct {
	// Client is the etcd client to use; the caller closes it after the
	// Registry or Resolver. Required.
	Client *clientv3.Client
	// Prefix of the keys. Default DefaultPrefix.
	Prefix string
	// TTL bounds how long the instances of a process that stops without
	// deregistering stay visible to watchers, counted from its last
	// keep-alive (so from the crash). The Registry's lease is TTL minus
	// ExpiryAllowance, rounded down to whole seconds; see the package
	// comment. At least MinTTL (2 s). Default DefaultTTL. Unused by the
	// Resolver.
	TTL time.Duration
	// Logger receives what the Registry and Resolver recover from.
	// Default slog.Default().
	Logger *slog.Logger
}

// Validate reports a Config that cannot work.
func (c *Config) Validate() error {
	if c.Client == nil {
		return errors.New("etcd: Config.Client is required")
	}
	if c.TTL < 0 || (c.TTL > 0 && c.TTL < MinTTL) {
		return fmt.Errorf("etcd: Config.TTL is %v; it must be 0 (default %v) or at least %v (a lease of 1 s, etcd's shortest, plus %v for etcd to revoke it)", c.TTL, DefaultTTL, MinTTL, ExpiryAllowance)
	}
	return nil
}

func (c Config) fill() (Config, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

func serviceKey(prefix, service string) string { return prefix + service + "/" }

// endpoints names the etcd the client talks to, for errors.
func (c Config) endpoints() string { return strings.Join(c.Client.Endpoints(), ",") }

// checkService reports a service name that cannot be a key's segment.
func checkService(service string) error {
	if service == "" {
		return errors.New("etcd: the service name is empty")
	}
	if strings.Contains(service, "/") {
		return fmt.Errorf("etcd: service name %q holds a \"/\", which would put its instances under another service's keys", service)
	}
	return nil
}

// Registry registers instances under one kept-alive lease. It is safe for
// concurrent use.
//
// Lock order: mu only; no etcd call blocks while a goroutine other than
// the caller waits for mu longer than that call.
type Registry struct {
	cfg Config

	mu      sync.Mutex
	lease   clientv3.LeaseID  // guarded by mu; 0 before the first Register
	granted int64             // guarded by mu: the lease's TTL in seconds, as etcd granted it
	keys    map[string]string // guarded by mu: key -> value of each registered instance
	closed  bool              // guarded by mu
	ctx     context.Context   // canceled by Close; bounds the keep-alive
	cancel  context.CancelFunc
	// stopKeepAlive, guarded by mu, ends the keep-alive of r.lease (nil
	// without a lease).
	stopKeepAlive context.CancelFunc
	wg            sync.WaitGroup // the keep-alive goroutine
}

var _ discovery.Registry = (*Registry)(nil)

// NewRegistry returns a Registry; it contacts etcd at the first Register.
func NewRegistry(cfg Config) (*Registry, error) {
	cfg, err := cfg.fill()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Registry{cfg: cfg, keys: make(map[string]string), ctx: ctx, cancel: cancel}, nil
}

// ErrClosed is returned by a Registry's methods after Close.
var ErrClosed = errors.New("etcd: registry closed")

// leaseSeconds is the lease asked of etcd: TTL minus ExpiryAllowance,
// rounded down to whole seconds (at least 1: Validate ensures TTL >= MinTTL).
func (r *Registry) leaseSeconds() int64 {
	return int64((r.cfg.TTL - ExpiryAllowance) / time.Second)
}

// Lease returns the Registry's current lease and its TTL as etcd granted
// it, or 0, 0 when it holds none: before the first Register, after a failed
// first Register, and from the loss of a lease until it is replaced. The
// instances of a process that dies stay visible at most granted +
// ExpiryAllowance <= Config.TTL after its last keep-alive.
func (r *Registry) Lease() (id clientv3.LeaseID, granted time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lease, time.Duration(r.granted) * time.Second
}

// grantLocked makes a lease, puts every registered instance under it and
// starts keeping it alive. If any step fails it gives the new lease back
// (deleting what it put) and the registry is left without a lease, as
// before: no lease is ever kept alive but r.lease. r.mu is held, r.lease
// is 0.
func (r *Registry) grantLocked(ctx context.Context) error {
	want := r.leaseSeconds()
	lease, err := r.cfg.Client.Grant(ctx, want)
	if err != nil {
		return fmt.Errorf("granting a lease of %ds: %w", want, err)
	}
	if lease.TTL > want {
		// etcd raised it to its minimum: the instances would outlive a
		// crash by more than TTL. Give the lease back and say so.
		r.revoke(lease.ID, "a lease granted too long")
		return fmt.Errorf("%w: asked for a lease of %ds (Config.TTL %v minus %v), etcd granted %ds; set Config.TTL to at least %v or lower etcd's election timeout",
			ErrTTLTooShort, want, r.cfg.TTL, ExpiryAllowance, lease.TTL, time.Duration(lease.TTL)*time.Second+ExpiryAllowance)
	}
	kaCtx, stop := context.WithCancel(r.ctx)
	ch, err := r.cfg.Client.KeepAlive(kaCtx, lease.ID)
	if err != nil {
		stop()
		r.revoke(lease.ID, "a lease that could not be kept alive")
		return fmt.Errorf("keeping lease %x alive: %w", lease.ID, err)
	}
	// The client drops keep-alive answers nobody reads: the goroutine
	// draining them can start after the Puts.
	for k, v := range r.keys {
		if _, err := r.cfg.Client.Put(ctx, k, v, clientv3.WithLease(lease.ID)); err != nil {
			stop()
			r.revoke(lease.ID, "a lease the instances could not be put under")
			return fmt.Errorf("putting %s under a new lease: %w", k, err)
		}
	}
	r.lease, r.granted, r.stopKeepAlive = lease.ID, lease.TTL, stop
	r.wg.Add(1)
	go r.keepAlive(kaCtx, lease.ID, ch)
	return nil
}

// revoke gives lease id back to etcd, which deletes the keys under it, or
// logs why it could not (the lease then expires by itself).
func (r *Registry) revoke(id clientv3.LeaseID, what string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.cfg.Client.Revoke(ctx, id); err != nil {
		r.cfg.Logger.Warn("etcd: revoking "+what, "lease", fmt.Sprintf("%x", id), "err", err)
	}
}

// dropLocked stops keeping the registry's lease alive and gives it back.
// r.mu is held.
func (r *Registry) dropLocked() {
	r.stopKeepAlive()
	r.revoke(r.lease, "an unused lease")
	r.lease, r.granted, r.stopKeepAlive = 0, 0, nil
}

// keepAlive drains the lease's keep-alive answers; when they stop before
// Close (the lease expired or etcd was unreachable too long), it grants a
// new lease and puts the instances again. It ends without doing so when
// ctx, the lease's keep-alive context, was canceled: by Close, or by the
// registry giving the lease back.
func (r *Registry) keepAlive(ctx context.Context, id clientv3.LeaseID, ch <-chan *clientv3.LeaseKeepAliveResponse) {
	defer r.wg.Done()
	for range ch {
	}
	if ctx.Err() != nil {
		return
	}
	r.registerAgain(id)
}

// registerAgain replaces lost lease id, retrying with a backoff until it
// did or that is no longer needed (see renew).
func (r *Registry) registerAgain(id clientv3.LeaseID) {
	backoff := 100 * time.Millisecond
	for {
		if r.ctx.Err() != nil {
			return
		}
		if r.cfg.Client.Ctx().Err() != nil {
			r.cfg.Logger.Error("etcd: registry lease lost and the etcd client is closed; the instances expire with the lease", "lease", fmt.Sprintf("%x", id))
			return
		}
		done, err := r.renew(id)
		if done {
			return
		}
		r.cfg.Logger.Warn("etcd: registering again failed", "endpoints", r.cfg.endpoints(), "err", err, "retry_in", backoff)
		timer := time.NewTimer(backoff)
		select {
		case <-r.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// renew replaces lost lease id: it grants a new lease and puts every
// registered instance under it. It reports done when that is no longer
// the caller's to do: the registry is closed, a Register granted a new
// lease meanwhile, or no instance is left (the next Register grants one).
func (r *Registry) renew(id clientv3.LeaseID) (done bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return true, nil
	}
	if r.lease == id {
		r.cfg.Logger.Warn("etcd: registry lease lost; registering again", "lease", fmt.Sprintf("%x", id), "ttl", r.cfg.TTL)
		r.stopKeepAlive()
		r.lease, r.granted, r.stopKeepAlive = 0, 0, nil
	}
	if r.lease != 0 || len(r.keys) == 0 {
		return true, nil
	}
	gctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
	defer cancel()
	if err := r.grantLocked(gctx); err != nil {
		return false, err
	}
	return true, nil
}

// Register puts inst under service's key, attached to the registry's lease
// (granted at the first Register, which also puts under it the instances
// still registered if the previous lease was lost). It replaces an instance
// of the same address. When etcd refuses the Put because the lease is gone
// (lost before its keep-alive noticed), Register replaces the lease as the
// keep-alive would and puts inst under the new one. A Register that fails
// while no other instance is registered gives the lease back.
func (r *Registry) Register(ctx context.Context, service string, inst discovery.Instance) error {
	if err := checkService(service); err != nil {
		return err
	}
	if inst.Address == "" {
		return fmt.Errorf("etcd: registering service %s: the instance has no address", service)
	}
	v, err := record.Encode(inst)
	if err != nil {
		return fmt.Errorf("etcd: encoding the instance %s: %w", inst.Address, err)
	}
	key := serviceKey(r.cfg.Prefix, service) + inst.Address
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.lease == 0 {
		if err := r.grantLocked(ctx); err != nil {
			return fmt.Errorf("etcd: registering %s at %s: %w", key, r.cfg.endpoints(), err)
		}
	}
	_, err = r.cfg.Client.Put(ctx, key, v, clientv3.WithLease(r.lease))
	if err != nil && r.leaseGone(ctx) {
		// The lease was lost (it expired, was revoked, or etcd lost its
		// data) before its keep-alive noticed: replace it now, putting
		// the registered instances under the new one, rather than fail.
		lost := r.lease
		r.cfg.Logger.Warn("etcd: registry lease lost; registering again", "lease", fmt.Sprintf("%x", lost), "ttl", r.cfg.TTL)
		r.stopKeepAlive()
		r.lease, r.granted, r.stopKeepAlive = 0, 0, nil
		if err := r.grantLocked(ctx); err != nil {
			if len(r.keys) > 0 {
				// The keep-alive that would have put them again is
				// stopped: retry in its place.
				r.wg.Add(1)
				go func() {
					defer r.wg.Done()
					r.registerAgain(lost)
				}()
			}
			return fmt.Errorf("etcd: registering %s at %s: its lease %x was lost and replacing it failed: %w", key, r.cfg.endpoints(), lost, err)
		}
		_, err = r.cfg.Client.Put(ctx, key, v, clientv3.WithLease(r.lease))
	}
	if err != nil {
		if len(r.keys) == 0 {
			// Nothing is under the lease: give it back rather than
			// keep it alive for nothing until Close.
			r.dropLocked()
		}
		return fmt.Errorf("etcd: registering %s at %s: %w", key, r.cfg.endpoints(), err)
	}
	r.keys[key] = v
	return nil
}

// leaseGone reports whether etcd says the registry's lease does not exist
// (false when it cannot say). r.mu is held.
func (r *Registry) leaseGone(ctx context.Context) bool {
	resp, err := r.cfg.Client.TimeToLive(ctx, r.lease)
	return err == nil && resp.TTL <= 0
}

// Deregister deletes the key of service's instance at inst.Address. A key
// this registry put is deleted only while it is still under its lease: one
// another process has put since (a new server on the same address, started
// before the old one stops) stays. When no instance is left it also gives
// the lease back (stopping its keep-alive), which removes the key even if
// its Delete failed; the next Register grants a new lease.
func (r *Registry) Deregister(ctx context.Context, service string, inst discovery.Instance) error {
	if err := checkService(service); err != nil {
		return err
	}
	key := serviceKey(r.cfg.Prefix, service) + inst.Address
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	var err error
	if _, mine := r.keys[key]; mine && r.lease != 0 {
		_, err = r.cfg.Client.Txn(ctx).
			If(clientv3.Compare(clientv3.LeaseValue(key), "=", r.lease)).
			Then(clientv3.OpDelete(key)).
			Commit()
	} else {
		_, err = r.cfg.Client.Delete(ctx, key)
	}
	delete(r.keys, key)
	if len(r.keys) == 0 && r.lease != 0 {
		// Nothing is left under the lease: give it back rather than
		// keep it alive for nothing until Close.
		r.dropLocked()
	}
	if err != nil {
		return fmt.Errorf("etcd: deregistering %s at %s: %w", key, r.cfg.endpoints(), err)
	}
	return nil
}

// Close revokes the lease, which deletes every instance still registered,
// and stops keeping it alive. It does not close the etcd client.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	lease := r.lease
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	if lease == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.cfg.Client.Revoke(ctx, lease); err != nil {
		return fmt.Errorf("etcd: revoking lease %x at %s: %w", lease, r.cfg.endpoints(), err)
	}
	return nil
}

// Resolver reads and watches instances in etcd. It is safe for concurrent
// use.
type Resolver struct {
	cfg Config
}

var _ discovery.Resolver = (*Resolver)(nil)

// NewResolver returns a Resolver.
func NewResolver(cfg Config) (*Resolver, error) {
	cfg, err := cfg.fill()
	if err != nil {
		return nil, err
	}
	return &Resolver{cfg: cfg}, nil
}

// load reads service's instances by key, and the revision they were read at.
func (r *Resolver) load(ctx context.Context, service string) (map[string]discovery.Instance, int64, error) {
	if err := checkService(service); err != nil {
		return nil, 0, err
	}
	prefix := serviceKey(r.cfg.Prefix, service)
	if err := r.clientClosed(prefix); err != nil {
		return nil, 0, err
	}
	// The client retries a read on its closed connection until ctx ends:
	// end it with the client.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.cfg.Client.Ctx(), cancel)()
	resp, err := r.cfg.Client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		if err := r.clientClosed(prefix); err != nil {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("etcd: reading %s at %s: %w", prefix, r.cfg.endpoints(), err)
	}
	m := make(map[string]discovery.Instance, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if inst, ok := r.decode(kv.Key, kv.Value); ok {
			m[string(kv.Key)] = inst
		}
	}
	return m, resp.Header.Revision, nil
}

// clientClosed reports, reading prefix, that the etcd client was closed:
// nothing can be read or watched through it any more.
func (r *Resolver) clientClosed(prefix string) error {
	if err := r.cfg.Client.Ctx().Err(); err != nil {
		return fmt.Errorf("etcd: reading %s at %s: the etcd client is closed: %w", prefix, r.cfg.endpoints(), err)
	}
	return nil
}

func (r *Resolver) decode(key, value []byte) (discovery.Instance, bool) {
	inst, err := record.Decode(value)
	if err != nil {
		r.cfg.Logger.Warn("etcd: ignoring an undecodable instance", "key", string(key), "err", err)
		return inst, false
	}
	return inst, true
}

func list(m map[string]discovery.Instance) []discovery.Instance {
	out := make([]discovery.Instance, 0, len(m))
	for _, inst := range m {
		if inst.Tags != nil {
			tags := make(map[string]string, len(inst.Tags))
			for k, v := range inst.Tags {
				tags[k] = v
			}
			inst.Tags = tags
		}
		out = append(out, inst)
	}
	slices.SortFunc(out, func(a, b discovery.Instance) int { return strings.Compare(a.Address, b.Address) })
	return out
}

// Resolve returns service's instances now, sorted by address.
func (r *Resolver) Resolve(ctx context.Context, service string) ([]discovery.Instance, error) {
	m, _, err := r.load(ctx, service)
	if err != nil {
		return nil, err
	}
	return list(m), nil
}

// Watch reads service's instances and follows their changes. ctx bounds
// the first read.
func (r *Resolver) Watch(ctx context.Context, service string) (discovery.Watcher, error) {
	m, rev, err := r.load(ctx, service)
	if err != nil {
		return nil, err
	}
	w := &watcher{r: r, service: service, m: m, closed: make(chan struct{})}
	w.life, w.end = context.WithCancel(context.Background())
	w.start(rev)
	return w, nil
}

// watcher follows one service. Next runs on one goroutine at a time; the
// fields above mu belong to it.
type watcher struct {
	r       *Resolver
	service string
	m       map[string]discovery.Instance // instances by key, as last seen
	last    []discovery.Instance          // what Next last returned
	first   bool                          // Next has returned once
	ch      clientv3.WatchChan            // nil: watch again at the next Next
	watched time.Time                     // when the current etcd watch started
	pause   time.Duration                 // the last wait before reading again (see pace)
	failed  bool                          // the last read of the instances failed

	mu        sync.Mutex
	cancel    context.CancelFunc // guarded by mu: ends the current etcd watch
	closeOnce sync.Once
	closed    chan struct{}      // closed by Close
	life      context.Context    // canceled by Close: ends a read of the instances
	end       context.CancelFunc // cancels life
}

// start watches the service's keys from revision rev+1.
func (w *watcher) start(rev int64) {
	ctx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	w.cancel = cancel
	select {
	case <-w.closed:
		cancel()
	default:
	}
	w.mu.Unlock()
	w.watched = time.Now()
	prefix := serviceKey(w.r.cfg.Prefix, w.service)
	w.ch = w.r.cfg.Client.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
}

// Pauses between reading the instances again after broken watches (see
// pace).
const (
	minResyncPause = 100 * time.Millisecond
	maxResyncPause = 5 * time.Second
)

// pace waits before a watch that broke is replaced, so that a watch etcd
// ends as soon as it starts (one it refuses to serve) is not read again and
// restarted as fast as etcd answers: no wait when the watch lasted
// maxResyncPause, else minResyncPause doubling at each such watch in a row
// up to maxResyncPause. After a failed read (refused) it always waits, the
// same way, so that a caller calling Next again at once does not read as
// fast as etcd refuses. It returns early with ctx's error or
// discovery.ErrWatcherClosed.
func (w *watcher) pace(ctx context.Context) error {
	if !w.failed && time.Since(w.watched) >= maxResyncPause {
		w.pause = 0
		return nil
	}
	w.pause = min(max(2*w.pause, minResyncPause), maxResyncPause)
	timer := time.NewTimer(w.pause)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-w.closed:
		return discovery.ErrWatcherClosed
	}
}

// resync reads the instances again and restarts the watch (after a
// compaction or a broken watch).
func (w *watcher) resync(ctx context.Context) error {
	w.stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(w.life, cancel)()
	m, rev, err := w.r.load(ctx, w.service)
	if w.life.Err() != nil {
		w.ch = nil
		return discovery.ErrWatcherClosed
	}
	w.failed = err != nil
	if err != nil {
		// Watch again from where we were on the next try.
		w.ch = nil
		return err
	}
	w.m = m
	w.start(rev)
	return nil
}

func (w *watcher) Next(ctx context.Context) ([]discovery.Instance, error) {
	select {
	case <-w.closed:
		return nil, discovery.ErrWatcherClosed
	default:
	}
	if !w.first {
		w.first = true
		w.last = list(w.m)
		return list(w.m), nil
	}
	for {
		if w.ch == nil {
			if w.failed {
				if err := w.pace(ctx); err != nil {
					return nil, err
				}
			}
			if err := w.resync(ctx); err != nil {
				return nil, err
			}
			// The instances may have changed while there was no watch.
			if cur := list(w.m); !discovery.Equal(cur, w.last) {
				w.last = cur
				return list(w.m), nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-w.closed:
			return nil, discovery.ErrWatcherClosed
		case resp, ok := <-w.ch:
			if !ok || resp.Err() != nil || resp.Canceled {
				select {
				case <-w.closed:
					return nil, discovery.ErrWatcherClosed
				default:
				}
				var err error = errors.New("watch channel closed")
				if ok && resp.Err() != nil {
					err = resp.Err()
				}
				if err := w.r.clientClosed(serviceKey(w.r.cfg.Prefix, w.service)); err != nil {
					w.ch = nil
					return nil, err
				}
				w.r.cfg.Logger.Warn("etcd: watch interrupted; reading the instances again", "service", w.service, "err", err)
				if err := w.pace(ctx); err != nil {
					return nil, err
				}
				if err := w.resync(ctx); err != nil {
					return nil, err
				}
			} else {
				for _, ev := range resp.Events {
					key := string(ev.Kv.Key)
					switch ev.Type {
					case clientv3.EventTypePut:
						if inst, ok := w.r.decode(ev.Kv.Key, ev.Kv.Value); ok {
							w.m[key] = inst
						} else {
							delete(w.m, key)
						}
					case clientv3.EventTypeDelete:
						delete(w.m, key)
					}
				}
			}
			if cur := list(w.m); !discovery.Equal(cur, w.last) {
				w.last = cur
				return list(w.m), nil
			}
		}
	}
}

// Close ends the watch; a Next waiting returns discovery.ErrWatcherClosed.
func (w *watcher) Close() error {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		close(w.closed)
		w.mu.Unlock()
		w.end()
		w.stop()
	})
	return nil
}

// stop ends the current etcd watch.
func (w *watcher) stop() {
	w.mu.Lock()
	if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
}
