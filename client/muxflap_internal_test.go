package client

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// doneSignal is a context that reports the first call of Done on entered:
// the multiplexed pool's get calls it only once it waits for another's
// dial (lockDial), after it took the address's slots.
type doneSignal struct {
	context.Context
	once    sync.Once
	entered chan struct{}
}

func (c *doneSignal) Done() <-chan struct{} {
	c.once.Do(func() { close(c.entered) })
	return c.Context.Done()
}

// TestMuxDialAcrossInstanceFlapKeepsConnection: discovery drops an address
// and lists it again while a call dials it. The connection that dial makes
// must go into the address's slots, where later calls find it, not into the
// slots dropped with the address, where nothing but Close reaches it (its
// reader and socket stayed until then, one per flap).
func TestMuxDialAcrossInstanceFlapKeepsConnection(t *testing.T) {
	addr := silentServer(t)
	c, err := New("svc", WithHostPorts(addr), WithMuxConnection(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.mux
	s, err := p.slots(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.lockDial(context.Background(), 0, addr, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ctx := &doneSignal{Context: context.Background(), entered: make(chan struct{})}
	type got struct {
		mc  *muxConn
		err error
	}
	res := make(chan got, 1)
	go func() {
		mc, err := p.get(ctx, addr, time.Now().Add(5*time.Second))
		res <- got{mc, err}
	}()
	<-ctx.entered // it holds the slots and waits for the dial lock
	p.retain(map[string]struct{}{})
	p.retain(map[string]struct{}{addr: {}})
	s.unlockDial(0)
	g := <-res
	if g.err != nil {
		t.Fatalf("get across the flap: %v", g.err)
	}
	again, err := p.get(context.Background(), addr, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if again != g.mc {
		t.Fatalf("the next call dialed a connection of its own: the pool has %d open, the first was left out of the address's slots", p.stats().Open)
	}
	if n := p.stats().Open; n != 1 {
		t.Fatalf("%d connections open, want 1", n)
	}
}

// silentServer listens on a loopback port, accepts every connection and
// never reads or writes: its connections stay open until the test ends.
// It returns the address.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var accepted []net.Conn
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted = append(accepted, conn)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		for _, conn := range accepted {
			conn.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}
