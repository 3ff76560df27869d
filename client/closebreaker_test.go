package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// TestCloseDoesNotOpenSharedBreaker: circuitbreak.DefaultCounts counts
// every error except those that are answers or the caller's own doing.
// Closing a client is the caller's own doing, but each call it ends fails
// with a Connection error ("the client is closed"), which the
// service-level breaker counted as a failure of the service. Two clients
// of one service sharing a Group (a client replaced on a configuration
// reload): closing the old one while 25 calls waited for their replies
// opened the breaker, and the new client's calls to the service were
// rejected.
func TestCloseDoesNotOpenSharedBreaker(t *testing.T) {
	const calls = 25 // more than DefaultMinSamples
	srv := startSilentServer(t)
	g, err := circuitbreak.NewGroup(circuitbreak.Config{OpenFor: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	long := setup{"long/ttheader", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})}
	old := newClient(t, srv.addr(), long, client.WithCircuitBreaker(g, nil), client.WithRPCTimeout(0))
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if _, err := echo(context.Background(), old, &echoArgs{Msg: []byte("x")}); rpcerr.CodeOf(err) != rpcerr.Connection {
				t.Errorf("call in flight at Close: %v, want a Connection error saying the client is closed", err)
			}
		})
	}
	for range calls {
		<-srv.got // each call's request reached the server on a connection of its own
	}
	old.Close()
	wg.Wait()

	b := g.Get("echo")
	if st := b.State(); st != circuitbreak.Closed {
		t.Fatalf("breaker %v (opened %d times) after Close ended %d calls: they were counted as failures of the service", st, b.Stats().Opened, calls)
	}
	fresh := newClient(t, srv.addr(), long, client.WithCircuitBreaker(g, nil))
	_, err = echo(context.Background(), fresh, &echoArgs{Msg: []byte("y")}, client.WithCallTimeout(50*time.Millisecond))
	if errors.Is(err, circuitbreak.ErrOpen) || rpcerr.CodeOf(err) != rpcerr.Timeout {
		t.Fatalf("a call of the new client: %v, want a timeout (the server does not answer), not a rejection", err)
	}
}
