//go:build linux

package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestConnectTimeoutErrorSaysSo: a dial that the connect timeout cuts
// short fails with an error naming the address and the connect timeout,
// on every pool. Before, it said only "dialing <addr>: netpoll: dial timed
// out", which does not tell the connect timeout from the call's.
func TestConnectTimeoutErrorSaysSo(t *testing.T) {
	addr := blackhole(t)
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, addr, s, client.WithConnectTimeout(50*time.Millisecond), client.WithRPCTimeout(5*time.Second))
			_, err := echo(context.Background(), c, &echoArgs{})
			if rpcerr.CodeOf(err) != rpcerr.Connection {
				t.Fatalf("got %v (code %v), want a connection error", err, rpcerr.CodeOf(err))
			}
			if msg := err.Error(); !strings.Contains(msg, addr) || !strings.Contains(msg, "connect timeout 50ms") {
				t.Fatalf("error %q: want one naming %s and the connect timeout 50ms", msg, addr)
			}
		})
	}
}
