package client

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// closedAfterCheck is a connection whose peer closes it just after the
// first IsActive check says it is open: the pool's close callback then runs
// on the closing goroutine, as netpoll runs it, at once when the pool's lock
// is free, else as soon as it is released.
type closedAfterCheck struct {
	netpoll.Connection
	p      *longPool
	armed  bool
	closer sync.WaitGroup
}

func (c *closedAfterCheck) IsActive() bool {
	if !c.armed {
		return c.Connection.IsActive()
	}
	c.armed = false
	if c.p.mu.TryLock() {
		// The check runs outside the pool's lock: the close, callback
		// included, completes before the caller goes on.
		c.p.mu.Unlock()
		c.Connection.Close()
		return true
	}
	// The check runs under the pool's lock: the connection is closed
	// (IsActive is false from now on); its callback waits for the lock.
	c.closer.Go(func() { c.Connection.Close() })
	for c.Connection.IsActive() {
		runtime.Gosched()
	}
	return true
}

// TestLongPoolPutRacingPeerClose: a connection whose peer closes it while
// the long pool takes it back must not stay listed idle: dead, it held a
// room of MaxIdlePerAddress, so a live connection given back next was
// closed, and PoolStats counted an idle connection that no longer counted
// as open.
func TestLongPoolPutRacingPeerClose(t *testing.T) {
	addr := silentServer(t)
	p := newLongPool(&dialer{network: "tcp"}, LongPoolConfig{MaxIdlePerAddress: 1, MaxIdleTimeout: time.Minute})
	defer p.close()
	deadline := time.Now().Add(5 * time.Second)
	a, err := p.get(context.Background(), addr, deadline)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.get(context.Background(), addr, deadline)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := &closedAfterCheck{Connection: a.conn, p: p, armed: true}
	a.conn = wrapped
	p.put(a, true)
	wrapped.closer.Wait()
	if st := p.stats(); st.Idle != 0 || st.Open != 1 {
		t.Fatalf("after giving back a connection its peer closed meanwhile: %+v, want Idle 0 and Open 1 (the other connection)", st)
	}
	p.put(b, true)
	if st := p.stats(); st.Idle != 1 || st.Open != 1 || !b.conn.IsActive() {
		t.Fatalf("a live connection given back next: %+v (active %v), want it kept idle (Idle 1, Open 1)", st, b.conn.IsActive())
	}
}
