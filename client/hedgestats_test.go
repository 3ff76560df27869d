package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/transport"
)

// TestHedgedCallWithNoWinnerReportsItsRequest: a call whose attempts were
// all written and flushed, then timed out, reported Stats.Send,
// RequestSize and the remote address to the tracer with plain retries,
// but with backup requests (BackupDelay) Send zero, RequestSize 0 and no
// address, which the Stats doc reads as a request never sent: only a
// winner's timings were copied back to the call. With no winner, the
// attempt whose error the call returns gives its own.
func TestHedgedCallWithNoWinnerReportsItsRequest(t *testing.T) {
	_, addr := startPetrel(t)
	for _, tc := range []struct {
		name   string
		policy retry.Policy
	}{
		{"plain", retry.Policy{MaxAttempts: 2, Idempotent: true, AttemptTimeout: 50 * time.Millisecond, Backoff: retry.Backoff{Base: -1}}},
		{"hedged", retry.Policy{MaxAttempts: 2, Idempotent: true, AttemptTimeout: 50 * time.Millisecond, BackupDelay: 10 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := &traceTagger{}
			r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{"echo": tc.policy}})
			var remote net.Addr
			mw := func(next endpoint.Endpoint) endpoint.Endpoint {
				return func(ctx context.Context, req, resp any) error {
					err := next(ctx, req, resp)
					remote = rpcinfo.FromContext(ctx).RemoteAddr
					return err
				}
			}
			c := newClient(t, addr, setup{"long/ttheader", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})},
				client.WithRetry(r), client.WithTracer(tt), client.WithMiddleware(mw))
			// The handler sleeps past every attempt's timeout.
			_, err := echo(context.Background(), c, &echoArgs{Msg: []byte("hello"), SleepMs: 300})
			if rpcerr.CodeOf(err) != rpcerr.Timeout {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if st := tt.st; st.Send.IsZero() || st.RequestSize == 0 || remote == nil || remote.String() != addr {
				t.Errorf("every attempt was sent and timed out waiting for its reply, but Stats.Send = %v, RequestSize = %d, remote address %v",
					st.Send, st.RequestSize, remote)
			}
		})
	}
}
