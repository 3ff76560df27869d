package client

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// connPool hands out connections of the short and long pools.
type connPool interface {
	// get returns a connection to addr: an idle one or a new one.
	get(ctx context.Context, addr string, deadline time.Time) (*pconn, error)
	// put gives pc back after a call; reusable is false when the call left
	// the connection in an unknown state (an error, a timeout, the server's
	// request to drop it), and the pool then closes it.
	put(pc *pconn, reusable bool)
	// close closes every connection, those in use too (their calls fail
	// with errClientClosed, see ioError); later gets fail with it.
	close()
	// retain keeps connections only to the addresses in live (discovery
	// reported the others gone; option_discovery.go).
	retain(live map[string]struct{})
	// stats counts the pool's connections (Client.PoolStats).
	stats() PoolStats
}

// PoolStats is a snapshot of a client's connection pool
// ([Client.PoolStats]), for metrics such as contrib/metrics' pool gauges.
type PoolStats struct {
	// Open is how many connections the pool has open: idle ones and those
	// a call uses (short and long pools), or every multiplexed connection
	// whose reader runs, draining ones included (WithMuxConnection).
	Open int
	// Idle is how many of them the long pool keeps idle (0 for the other
	// pools).
	Idle int
	// Addresses is how many server addresses the pool keeps connections
	// for: with idle connections (long pool) or with connection slots
	// (multiplexed pool); 0 for the short pool.
	Addresses int
}

// PoolStats returns a snapshot of the client's connection pool. It takes
// the pool's lock briefly; call it at a metrics scrape, not per call.
func (c *Client) PoolStats() PoolStats {
	if c.mux != nil {
		return c.mux.stats()
	}
	return c.pool.stats()
}

// connSet is the connections a pool dialed and has not closed, idle and in
// use, which closeAll closes (a call waiting on one then fails with
// errClientClosed, see ioError). It changes at a dial and a discard, never
// when a call reuses a connection.
type connSet struct {
	mu     sync.Mutex
	conns  map[*pconn]struct{} // guarded by mu
	closed bool                // guarded by mu
	open   atomic.Int64        // len(conns), read without the lock
}

// dial dials addr and adds the connection, unless closeAll ran meanwhile:
// then it closes it and fails with errClientClosed.
func (s *connSet) dial(ctx context.Context, d *dialer, addr string, deadline time.Time) (*pconn, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed { // no connection to the server once Close has run
		return nil, errClientClosed
	}
	conn, err := d.dial(ctx, addr, deadline, true)
	if err != nil {
		return nil, err
	}
	pc := newPconn(conn, addr)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return nil, errClientClosed
	}
	if s.conns == nil {
		s.conns = make(map[*pconn]struct{})
	}
	s.conns[pc] = struct{}{}
	s.mu.Unlock()
	s.open.Add(1)
	return pc, nil
}

// discard removes pc from the set and closes it.
func (s *connSet) discard(pc *pconn) {
	s.forget(pc)
	pc.close()
}

// forget removes pc from the set, if it is there (it may be discarded and
// forgotten, in either order: each counts once).
func (s *connSet) forget(pc *pconn) {
	s.mu.Lock()
	_, ok := s.conns[pc]
	delete(s.conns, pc)
	s.mu.Unlock()
	if ok {
		s.open.Add(-1)
	}
}

// closeAll closes every connection of the set (each call waiting on one
// wakes with an error and discards it); later dials fail.
func (s *connSet) closeAll() {
	s.mu.Lock()
	s.closed = true
	all := slices.Collect(maps.Keys(s.conns))
	s.mu.Unlock()
	for _, pc := range all {
		pc.close()
	}
}

// shortPool dials a connection per call and closes it afterwards.
type shortPool struct {
	d     *dialer
	conns connSet
}

func (p *shortPool) get(ctx context.Context, addr string, deadline time.Time) (*pconn, error) {
	return p.conns.dial(ctx, p.d, addr, deadline)
}

func (p *shortPool) put(pc *pconn, _ bool) { p.conns.discard(pc) }

func (p *shortPool) stats() PoolStats { return PoolStats{Open: int(p.conns.open.Load())} }

func (p *shortPool) close() { p.conns.closeAll() }

// longPool keeps idle connections per address, at most MaxIdlePerAddress
// each and MaxIdleGlobal in all, for at most MaxIdleTimeout. A connection
// whose peer closed it (IsActive false) is never handed out, and one idle
// leaves the pool as it closes (forgetClosed).
type longPool struct {
	d   *dialer
	cfg LongPoolConfig

	conns connSet // idle and in use

	mu      sync.Mutex
	idle    map[string][]*pconn // per address, oldest first; guarded by mu
	nidle   int                 // connections in idle; guarded by mu
	closed  bool                // guarded by mu
	janitor *time.Timer         // sweeps expired connections; guarded by mu
	live    map[string]struct{} // guarded by mu; nil: keep every address, else only these (retain)
	sweeps  atomic.Int64        // janitor runs (tests read it)
}

// discard closes a connection of the pool.
func (p *longPool) discard(pc *pconn) { p.conns.discard(pc) }

func (p *longPool) stats() PoolStats {
	st := PoolStats{Open: int(p.conns.open.Load())}
	p.mu.Lock()
	for _, list := range p.idle {
		if len(list) > 0 {
			st.Idle += len(list)
			st.Addresses++
		}
	}
	p.mu.Unlock()
	return st
}

// minSweepEvery bounds how often the janitor runs: a MaxIdleTimeout of a
// microsecond must not wake it a million times a second. (get never hands
// out an expired connection, whatever the janitor's pace.)
const minSweepEvery = 100 * time.Millisecond

// sweepEvery is the janitor's period.
func (p *longPool) sweepEvery() time.Duration {
	return max(p.cfg.MaxIdleTimeout, minSweepEvery)
}

func newLongPool(d *dialer, cfg LongPoolConfig) *longPool {
	p := &longPool{d: d, cfg: cfg, idle: make(map[string][]*pconn)}
	p.janitor = time.AfterFunc(p.sweepEvery(), p.sweep)
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
		p.nidle--
		if pc.conn.IsActive() && now.Sub(pc.idleSince) < p.cfg.MaxIdleTimeout {
			found = pc
			found.taken = now
			break
		}
		stale = append(stale, pc)
	}
	p.idle[addr] = list
	p.mu.Unlock()
	for _, pc := range stale {
		p.discard(pc)
	}
	if found != nil {
		return found, nil
	}
	pc, err := p.conns.dial(ctx, p.d, addr, deadline)
	if err != nil {
		return nil, err
	}
	// The peer's close of a dialed connection closes it at once (netpoll):
	// an idle one then leaves the pool now, not at the next sweep.
	pc.conn.AddCloseCallback(func(netpoll.Connection) error {
		p.forgetClosed(pc)
		return nil
	})
	pc.taken = time.Now()
	return pc, nil
}

// forgetClosed is run as a connection of the pool closes (its peer closed
// it, or the pool did): if it was idle, it leaves its address's list, so
// that it holds no room of MaxIdlePerAddress or MaxIdleGlobal that a live
// connection could have, and it no longer counts as open. It runs on the
// goroutine that closes the connection, never one holding p.mu.
func (p *longPool) forgetClosed(pc *pconn) {
	p.mu.Lock()
	list := p.idle[pc.addr]
	if i := slices.Index(list, pc); i >= 0 {
		list = slices.Delete(list, i, i+1)
		p.nidle--
		if len(list) == 0 {
			delete(p.idle, pc.addr)
		} else {
			p.idle[pc.addr] = list
		}
	}
	p.mu.Unlock()
	p.conns.forget(pc)
}

func (p *longPool) put(pc *pconn, reusable bool) {
	if !reusable {
		p.discard(pc)
		return
	}
	pc.idleSince = pc.taken
	p.mu.Lock()
	list := p.idle[pc.addr]
	_, kept := p.live[pc.addr]
	// IsActive is checked under the lock: a close after it runs
	// forgetClosed, which waits for the lock and then finds pc listed. (A
	// check before the lock let a close fall between it and the insertion:
	// forgetClosed found nothing to remove, and the dead connection held a
	// room of the pool until a get or the janitor came to it.)
	if !pc.conn.IsActive() || p.closed || (p.live != nil && !kept) {
		p.mu.Unlock()
		p.discard(pc)
		return
	}
	var expired []*pconn
	if p.full(list) {
		// The room may be held by connections no get will hand out again:
		// idle for MaxIdleTimeout, counted from their calls' start (a call
		// longer than that gives its connection back expired, at any place
		// in the list). They leave for pc, unless pc has expired too: the
		// address's, and when the pool's room is what is full, every
		// address's. Only here is the clock read.
		now := time.Now()
		if now.Sub(pc.idleSince) < p.cfg.MaxIdleTimeout {
			stale := func(old *pconn) bool {
				if now.Sub(old.idleSince) < p.cfg.MaxIdleTimeout {
					return false
				}
				expired = append(expired, old)
				return true
			}
			list = slices.DeleteFunc(list, stale)
			if p.cfg.MaxIdleGlobal > 0 && p.nidle-len(expired) >= p.cfg.MaxIdleGlobal {
				for addr, other := range p.idle {
					if addr != pc.addr {
						p.idle[addr] = slices.DeleteFunc(other, stale)
					}
				}
			}
			p.nidle -= len(expired)
		}
		if p.full(list) {
			p.idle[pc.addr] = list
			p.mu.Unlock()
			for _, old := range expired {
				p.discard(old)
			}
			p.discard(pc)
			return
		}
	}
	p.idle[pc.addr] = append(list, pc)
	p.nidle++
	p.mu.Unlock()
	for _, old := range expired {
		p.discard(old)
	}
}

// full reports whether an address whose idle connections are list has no
// room for another: MaxIdlePerAddress, or MaxIdleGlobal in all. p.mu held.
func (p *longPool) full(list []*pconn) bool {
	return len(list) >= p.cfg.MaxIdlePerAddress || (p.cfg.MaxIdleGlobal > 0 && p.nidle >= p.cfg.MaxIdleGlobal)
}

// sweep closes the connections idle for MaxIdleTimeout or closed by their
// peer, then re-arms itself for sweepEvery.
func (p *longPool) sweep() {
	p.sweeps.Add(1)
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
	p.nidle -= len(stale)
	p.janitor.Reset(p.sweepEvery())
	p.mu.Unlock()
	for _, pc := range stale {
		p.discard(pc)
	}
}

func (p *longPool) close() {
	p.mu.Lock()
	p.closed = true
	p.janitor.Stop()
	idle := p.idle
	p.idle = make(map[string][]*pconn)
	p.nidle = 0
	p.mu.Unlock()
	for _, list := range idle {
		for _, pc := range list {
			p.discard(pc)
		}
	}
	p.conns.closeAll() // those in use
}
