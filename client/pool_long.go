package client

import (
	"context"
	"sync"
	"time"
)

// connPool hands out connections of the short and long pools.
type connPool interface {
	// get returns a connection to addr: an idle one or a new one.
	get(ctx context.Context, addr string, deadline time.Time) (*pconn, error)
	// put gives pc back after a call; reusable is false when the call left
	// the connection in an unknown state (an error, a timeout, the server's
	// request to drop it), and the pool then closes it.
	put(pc *pconn, reusable bool)
	// close closes every idle connection; later puts close theirs.
	close()
	// retain keeps connections only to the addresses in live (discovery
	// reported the others gone; option_discovery.go).
	retain(live map[string]struct{})
}

// shortPool dials a connection per call and closes it afterwards.
type shortPool struct {
	d *dialer
}

func (p *shortPool) get(ctx context.Context, addr string, deadline time.Time) (*pconn, error) {
	conn, err := p.d.dial(ctx, addr, deadline)
	if err != nil {
		return nil, err
	}
	return newPconn(conn, addr), nil
}

func (p *shortPool) put(pc *pconn, _ bool) { pc.close() }

func (p *shortPool) close() {}

// longPool keeps idle connections per address, at most MaxIdlePerAddress
// each, for at most MaxIdleTimeout. A connection whose peer closed it
// (IsActive false) is never handed out.
type longPool struct {
	d   *dialer
	cfg LongPoolConfig

	mu      sync.Mutex
	idle    map[string][]*pconn // per address, oldest first; guarded by mu
	closed  bool                // guarded by mu
	janitor *time.Timer         // sweeps expired connections; guarded by mu
	live    map[string]struct{} // guarded by mu; nil: keep every address, else only these (retain)
}

func newLongPool(d *dialer, cfg LongPoolConfig) *longPool {
	p := &longPool{d: d, cfg: cfg, idle: make(map[string][]*pconn)}
	p.janitor = time.AfterFunc(cfg.MaxIdleTimeout, p.sweep)
	return p
}

func (p *longPool) get(ctx context.Context, addr string, deadline time.Time) (*pconn, error) {
	var stale []*pconn
	var found *pconn
	now := time.Now()
	p.mu.Lock()
	list := p.idle[addr]
	for len(list) > 0 {
		pc := list[len(list)-1] // the most recently used is likeliest alive
		list[len(list)-1] = nil
		list = list[:len(list)-1]
		if pc.conn.IsActive() && now.Sub(pc.idleSince) < p.cfg.MaxIdleTimeout {
			found = pc
			break
		}
		stale = append(stale, pc)
	}
	p.idle[addr] = list
	p.mu.Unlock()
	for _, pc := range stale {
		pc.close()
	}
	if found != nil {
		return found, nil
	}
	conn, err := p.d.dial(ctx, addr, deadline)
	if err != nil {
		return nil, err
	}
	return newPconn(conn, addr), nil
}

func (p *longPool) put(pc *pconn, reusable bool) {
	if !reusable || !pc.conn.IsActive() {
		pc.close()
		return
	}
	pc.idleSince = time.Now()
	p.mu.Lock()
	list := p.idle[pc.addr]
	_, kept := p.live[pc.addr]
	if p.closed || len(list) >= p.cfg.MaxIdlePerAddress || (p.live != nil && !kept) {
		p.mu.Unlock()
		pc.close()
		return
	}
	p.idle[pc.addr] = append(list, pc)
	p.mu.Unlock()
}

// sweep closes the connections idle for MaxIdleTimeout or closed by their
// peer, then re-arms itself.
func (p *longPool) sweep() {
	var stale []*pconn
	now := time.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	for addr, list := range p.idle {
		keep := list[:0]
		for _, pc := range list {
			if pc.conn.IsActive() && now.Sub(pc.idleSince) < p.cfg.MaxIdleTimeout {
				keep = append(keep, pc)
			} else {
				stale = append(stale, pc)
			}
		}
		clear(list[len(keep):])
		if len(keep) == 0 {
			delete(p.idle, addr)
		} else {
			p.idle[addr] = keep
		}
	}
	p.janitor.Reset(p.cfg.MaxIdleTimeout)
	p.mu.Unlock()
	for _, pc := range stale {
		pc.close()
	}
}

func (p *longPool) close() {
	p.mu.Lock()
	p.closed = true
	p.janitor.Stop()
	idle := p.idle
	p.idle = make(map[string][]*pconn)
	p.mu.Unlock()
	for _, list := range idle {
		for _, pc := range list {
			pc.close()
		}
	}
}
