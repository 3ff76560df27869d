package client_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// TestMaxIdleGlobal: the long pool keeps at most MaxIdleGlobal idle
// connections over all addresses; a connection given back beyond that is
// closed, whatever its address's own count.
func TestMaxIdleGlobal(t *testing.T) {
	var addrs []string
	for range 4 {
		addrs = append(addrs, startServer(t).Addr())
	}
	c, err := client.New("Echo", client.WithHostPorts(addrs...), client.WithTransport(transport.Framed),
		client.WithLongConnection(client.LongPoolConfig{MaxIdlePerAddress: 4, MaxIdleGlobal: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 8 { // round robin: every address twice
		if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("m")}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if counted, listed := client.LongIdleCounts(c); counted != listed {
			t.Fatalf("after call %d: the pool counts %d idle connections, its lists hold %d", i, counted, listed)
		}
		if st := c.PoolStats(); st.Idle > 2 || st.Open > 3 {
			t.Fatalf("after call %d: %+v, want at most 2 idle (MaxIdleGlobal) and the one in use closed or kept", i, st)
		}
	}
	if st := c.PoolStats(); st.Idle != 2 || st.Open != 2 {
		t.Fatalf("after the calls: %+v, want 2 idle and open", st)
	}
	if _, err := client.New("Echo", client.WithHostPorts(addrs[0]),
		client.WithLongConnection(client.LongPoolConfig{MaxIdleGlobal: -1})); err == nil {
		t.Fatal("a negative MaxIdleGlobal was accepted")
	}
}
