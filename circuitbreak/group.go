package circuitbreak

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/rpcinfo"
)

// Group holds one breaker per key, all configured alike: per method for a
// service-level breaker ([Group.Middleware]), per instance address for an
// instance-level one (client.WithInstanceBreaker). It is safe for
// concurrent use; looking up an existing key takes no lock and allocates
// nothing, and making or removing a key costs the same however many keys
// the group holds.
type Group struct {
	cfg Config
	m   sync.Map // key -> *Breaker
	n   atomic.Int64
}

// NewGroup returns a Group whose breakers are configured by cfg.
func NewGroup(cfg Config) (*Group, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Group{cfg: cfg}, nil
}

// Get returns the breaker of key, made on first use.
func (g *Group) Get(key string) *Breaker {
	if b, ok := g.m.Load(key); ok {
		return b.(*Breaker)
	}
	b, loaded := g.m.LoadOrStore(key, newKeyed(g.cfg, key)) // cfg was validated by NewGroup
	if !loaded {
		g.n.Add(1)
	}
	return b.(*Breaker)
}

// Lookup returns the breaker of key, or nil if it has none yet.
func (g *Group) Lookup(key string) *Breaker {
	if b, ok := g.m.Load(key); ok {
		return b.(*Breaker)
	}
	return nil
}

// Range calls fn with each key and its breaker, in no particular order,
// until fn returns false. fn may call Get and Remove; a key added or
// removed while Range runs may or may not be seen. Metrics collectors use
// it to export the state of every breaker of a group.
func (g *Group) Range(fn func(key string, b *Breaker) bool) {
	g.m.Range(func(k, b any) bool { return fn(k.(string), b.(*Breaker)) })
}

// Len returns how many breakers the group holds.
func (g *Group) Len() int { return int(g.n.Load()) }

// Remove forgets the breaker of key (an instance that left: the client of
// client.WithInstanceBreaker calls it when its resolver drops an address).
// A call still holding the breaker finishes with it; the key's next Get
// makes a new, closed breaker.
func (g *Group) Remove(key string) {
	if _, loaded := g.m.LoadAndDelete(key); loaded {
		g.n.Add(-1)
	}
}

// Fallback is called when the breaker rejects a call (err wraps [ErrOpen])
// or the call fails with an error the breaker counts. It may fill resp and
// return nil to answer in place of the service, or return an error (err
// itself to change nothing).
type Fallback func(ctx context.Context, req, resp any, err error) error

// Middleware returns a service-level breaker middleware: one breaker per
// method (rpcinfo.FromContext(ctx).Method; calls without rpcinfo share the
// key ""). A rejected call does not reach next. fallback may be nil.
//
// A call whose context is done, or whose deadline has passed, when it
// reaches the middleware goes to next without the breaker: it fails on its
// own, the service unasked, and counted it would open the breaker of a
// healthy service on behalf of callers out of time (a fan-out handler
// past its own deadline) and turn away those that are not.
func (g *Group) Middleware(fallback Fallback) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			if spent(ctx) {
				return next(ctx, req, resp)
			}
			key := ""
			if ri := rpcinfo.FromContext(ctx); ri != nil {
				key = ri.Method
			}
			b := g.Get(key)
			t, err := b.Admit()
			if err != nil {
				if fallback != nil {
					return fallback(ctx, req, resp, err)
				}
				return err
			}
			err = next(ctx, req, resp)
			b.Finish(t, err)
			if err != nil && fallback != nil && g.cfg.counts(err) {
				return fallback(ctx, req, resp, err)
			}
			return err
		}
	}
}

// spent reports whether ctx is done or its deadline has passed.
func spent(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

func (c *Config) counts(err error) bool {
	if c.Counts != nil {
		return c.Counts(err)
	}
	return DefaultCounts(err)
}
