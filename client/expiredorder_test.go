package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// TestExpiredBehindFreshGivesUpRoom: an expired connection given back
// after a fresh one (the idle list is in the order connections came back,
// not their age) still gives up its room to the next fresh one. Eviction
// looked at the front of the list only, and the fresh one was closed.
func TestExpiredBehindFreshGivesUpRoom(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.Addr(), setup{proto: transport.TTHeader,
		pool: client.WithLongConnection(client.LongPoolConfig{MaxIdlePerAddress: 2, MaxIdleTimeout: 200 * time.Millisecond})},
		client.WithRPCTimeout(0))
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
