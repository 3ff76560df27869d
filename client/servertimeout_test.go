package client_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestServerTimeoutReplyKeepsPooledConnection: a handler that returns a
// timeout (a downstream call's, passed on) is answered with an exception
// the client reads as a Timeout error. That is a whole reply: the long
// pool's connection is in step and goes back to the pool, as it does after
// any other exception. Before, it was closed and the next call dialed
// again, one connection per such reply.
func TestServerTimeoutReplyKeepsPooledConnection(t *testing.T) {
	addr := startGov(t, func(_ context.Context, _ string, _ *echoArgs, _ *echoResult) error {
		return rpcerr.New(rpcerr.Timeout, "the downstream call timed out")
	})
	c, err := client.New("Gov", client.WithHostPorts(addr), client.WithLongConnection(client.LongPoolConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 3 {
		err := c.Call(context.Background(), "get", false, &echoArgs{}, &echoResult{})
		if rpcerr.CodeOf(err) != rpcerr.Timeout {
			t.Fatalf("call %d: %v, want the server's Timeout", i, err)
		}
		if st := c.PoolStats(); st.Open != 1 || st.Idle != 1 {
			t.Fatalf("after call %d answered with the server's timeout the pool has %d open, %d idle; want the one connection, idle", i, st.Open, st.Idle)
		}
	}
}
