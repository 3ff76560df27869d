package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestCloseEndsCallsInFlight: a call waiting, with no timeout, for the
// reply of a server that never answers ends promptly when the client is
// closed, on every pool, with an error saying so; its connection is
// closed, and a call made after Close fails at once with the same error.
// Before, the short and long pools' calls waited on after Close (until the
// server closed the connection), as the multiplexed pool's did not.
func TestCloseEndsCallsInFlight(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startSilentServer(t)
			c := newClient(t, srv.addr(), s, client.WithRPCTimeout(0))
			done := make(chan error, 1)
			go func() {
				_, err := echo(context.Background(), c, &echoArgs{Msg: []byte("hello")})
				done <- err
			}()
			<-srv.got // the request reached the server: the call waits for its reply
			c.Close()
			timer := time.NewTimer(5 * time.Second)
			defer timer.Stop()
			var err error
			select {
			case err = <-done:
			case <-timer.C:
				t.Fatal("the call still waited 5s after Close returned")
			}
			if rpcerr.CodeOf(err) != rpcerr.Connection || !strings.Contains(err.Error(), "client is closed") {
				t.Errorf("call in flight at Close: %v, want a Connection error saying the client is closed", err)
			}
			if open := c.PoolStats().Open; open != 0 {
				t.Errorf("PoolStats().Open = %d after Close and the call's end, want 0", open)
			}
			_, err = echo(context.Background(), c, &echoArgs{})
			if rpcerr.CodeOf(err) != rpcerr.Connection || !strings.Contains(err.Error(), "client is closed") {
				t.Errorf("call after Close: %v, want a Connection error saying the client is closed", err)
			}
		})
	}
}
