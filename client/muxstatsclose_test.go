package client_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// TestMuxStatsAfterClose: after Close the multiplexed pool's PoolStats
// counts no address (Addresses is the addresses the pool keeps
// connections for); it still counted the address's slots.
func TestMuxStatsAfterClose(t *testing.T) {
	_, addr := startPetrel(t)
	c := newClient(t, addr, setup{proto: transport.TTHeader, pool: client.WithMuxConnection(2)})
	if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if st := c.PoolStats(); st != (client.PoolStats{}) {
		t.Errorf("PoolStats after Close: %+v, want all zero", st)
	}
}
