package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// TestExpiredConnectionGivesUpIdleRoom: a connection given back after a
// call longer than MaxIdleTimeout is expired (its idle time counts from
// the call's start) and will never be handed out: it does not keep the
// address's only idle room (MaxIdlePerAddress 1) from the fresh connection
// given back next. It did, and the next call had to dial: three
// connections where two serve.
func TestExpiredConnectionGivesUpIdleRoom(t *testing.T) {
	srv := startServer(t)
	c := expiringClient(t, srv.Addr(), 1)
	done := make(chan error, 1)
	go func() { // A: a call longer than MaxIdleTimeout, back at ~300ms
		_, err := echo(context.Background(), c, &echoArgs{SleepMs: 300})
		done <- err
	}()
	time.Sleep(250 * time.Millisecond)
	// B: starts on a second connection at ~250ms, back at ~350ms, after A.
	if _, err := echo(context.Background(), c, &echoArgs{SleepMs: 100}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// C, at once: B's connection, given back 0ms ago, is fresh.
	if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Errorf("%d connections dialed, want 2: the fresh connection was closed to keep an expired one", n)
	}
}

// expiringClient is a TTHeader client of the long pool whose connections
// expire after 200 ms idle, with at most perAddr idle per address.
func expiringClient(t *testing.T, addr string, perAddr int) *client.Client {
	return newClient(t, addr, setup{proto: transport.TTHeader,
		pool: client.WithLongConnection(client.LongPoolConfig{MaxIdlePerAddress: perAddr, MaxIdleTimeout: 200 * time.Millisecond})},
		client.WithRPCTimeout(0))
}

// TestExpiredBehindFreshGivesUpRoom: an expired connection given back
// after a fresh one (the idle list is in the order connections came back,
// not their age) still gives up its room to the next fresh one. Eviction
// looked at the front of the list only, and the fresh one was closed.
func TestExpiredBehindFreshGivesUpRoom(t *testing.T) {
	srv := startServer(t)
	c := expiringClient(t, srv.Addr(), 2)
	long := make(chan error, 1)
	go func() { // X: conn 1, 0ms..300ms; given back expired (idle counts from 0ms)
		_, err := echo(context.Background(), c, &echoArgs{SleepMs: 300})
		long <- err
	}()
	time.Sleep(20 * time.Millisecond)
	mid := make(chan error, 1)
	go func() { // Y: conn 3, ~250ms..330ms, given back fresh
		time.Sleep(230 * time.Millisecond)
		_, err := echo(context.Background(), c, &echoArgs{SleepMs: 80})
		mid <- err
	}()
	time.Sleep(220 * time.Millisecond) // now ~240ms
	// A: conn 2, ~240ms..280ms, given back fresh: idle list [A]
	if _, err := echo(context.Background(), c, &echoArgs{SleepMs: 40}); err != nil {
		t.Fatal(err)
	}
	if err := <-long; err != nil { // X back at ~300ms, expired, appended behind A: [A X]
		t.Fatal(err)
	}
	if err := <-mid; err != nil { // Y back at ~330ms, fresh: room full, prefix A not expired, Y closed
		t.Fatal(err)
	}
	before := srv.accepted.Load()
	// Two calls at once: the pool should hold A and Y (both fresh).
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := echo(context.Background(), c, &echoArgs{SleepMs: 50}); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.accepted.Load() - before; n != 0 {
		t.Errorf("%d new connections dialed (of %d in all), want 0: the fresh connection was closed while an expired one kept its room", n, srv.accepted.Load())
	}
}

// TestExpiredGivesUpGlobalRoom: when MaxIdleGlobal is what is full, an
// expired idle connection of another address gives up its room to a fresh
// connection given back; only the address's own were looked at, and the
// fresh one was closed.
func TestExpiredGivesUpGlobalRoom(t *testing.T) {
	s1, s2 := startServer(t), startServer(t)
	c, err := client.New("Echo", client.WithHostPorts(s1.Addr(), s2.Addr()), client.WithTransport(transport.TTHeader),
		client.WithLongConnection(client.LongPoolConfig{MaxIdlePerAddress: 4, MaxIdleGlobal: 1, MaxIdleTimeout: 200 * time.Millisecond}),
		client.WithRPCTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Calls alternate between the two addresses (round robin), one at a time.
	// 1: address P, 300ms: given back expired; it holds the global room.
	if _, err := echo(context.Background(), c, &echoArgs{SleepMs: 300}); err != nil {
		t.Fatal(err)
	}
	// 2: address Q, fresh: the global room is full, Q has nothing expired:
	// the fresh connection is closed, P's expired one stays.
	if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	// 3: address P: its expired connection is discarded, a new one dialed.
	if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	before := s1.accepted.Load() + s2.accepted.Load()
	// 4: address Q: call 2's connection should be idle there.
	if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	if n := s1.accepted.Load() + s2.accepted.Load() - before; n != 0 {
		t.Errorf("call 4 dialed %d connection(s), want 0: the fresh connection was closed while another address's expired one held MaxIdleGlobal's room", n)
	}
}
