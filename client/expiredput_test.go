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
	c := newClient(t, srv.Addr(), setup{proto: transport.TTHeader,
		pool: client.WithLongConnection(client.LongPoolConfig{MaxIdlePerAddress: 1, MaxIdleTimeout: 200 * time.Millisecond})},
		client.WithRPCTimeout(0))
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
