package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// TestLongPoolForgetsIdleConnectionClosedByPeer: an idle connection whose
// server closed it leaves the long pool at once, not at the next sweep
// (MaxIdleTimeout, 30s by default): it no longer counts as open or idle,
// and it takes no room of MaxIdleGlobal from live connections to another
// server, which the pool keeps.
func TestLongPoolForgetsIdleConnectionClosedByPeer(t *testing.T) {
	a, b := startServer(t), startServer(t)
	c, err := client.New("Echo", client.WithHostPorts(a.Addr(), b.Addr()), client.WithTransport(transport.Framed),
		client.WithLongConnection(client.LongPoolConfig{MaxIdleGlobal: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := echo(ctx, c, &echoArgs{}); err != nil { // to a (round robin)
		t.Fatal(err)
	}
	if st := c.PoolStats(); st.Open != 1 || st.Idle != 1 {
		t.Fatalf("after a call: %+v, want 1 open and idle", st)
	}
	a.CloseConns()
	deadline := time.Now().Add(2 * time.Second)
	for {
		st := c.PoolStats()
		if st.Open == 0 && st.Idle == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("2s after the server closed the idle connection the pool still counts it: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
	if counted, listed := client.LongIdleCounts(c); counted != 0 || listed != 0 {
		t.Fatalf("the pool counts %d idle connections and lists %d, want none", counted, listed)
	}
	for i := range 2 { // to b, then a, whose calls dial anew
		if _, err := echo(ctx, c, &echoArgs{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := echo(ctx, c, &echoArgs{}); err != nil { // to b, on its idle connection
		t.Fatal(err)
	}
	if n := b.accepted.Load(); n != 1 {
		t.Fatalf("server b accepted %d connections for two calls in turn, want 1", n)
	}
}
