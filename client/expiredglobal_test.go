package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

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
