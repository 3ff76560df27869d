package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/retry"
)

// TestRetryStopsAtClose: a call with retries whose attempt failed, waiting
// out its backoff when the client is closed, makes no more attempts: the
// closed client's error is final (rpcerr.Final). It was a retryable
// Connection error, so the call went on through every backoff of its
// policy and, on the short and long pools, dialed the server again at each
// attempt after Close.
func TestRetryStopsAtClose(t *testing.T) {
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			// A server that resets every connection at once: each attempt
			// fails with a Connection error.
			srv := startRawServer(t, func(_ *rawServer, _ int32, conn net.Conn) {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			})
			r, err := retry.New(retry.Config{Default: retry.Policy{
				MaxAttempts: 5, Idempotent: true,
				Backoff: retry.Backoff{Base: 300 * time.Millisecond, Max: 300 * time.Millisecond, Jitter: -1},
			}})
			if err != nil {
				t.Fatal(err)
			}
			c := newClient(t, srv.addr(), s, client.WithRPCTimeout(0), client.WithRetry(r))
			done := make(chan error, 1)
			go func() {
				_, err := echo(context.Background(), c, &echoArgs{})
				done <- err
			}()
			time.Sleep(100 * time.Millisecond) // the first attempt failed: the call waits its backoff
			c.Close()
			start := time.Now()
			accepted := srv.accepted.Load()
			err = <-done
			d := time.Since(start)
			time.Sleep(20 * time.Millisecond)
			after := srv.accepted.Load() - accepted
			if d > 500*time.Millisecond || after > 0 {
				t.Errorf("the call ended %v after Close (%v), having dialed the server %d more time(s) after Close",
					d.Round(10*time.Millisecond), err, after)
			}
		})
	}
}
