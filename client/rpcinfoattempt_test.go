package client_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/rpcinfo"
)

// TestRPCInfoAttemptFieldsAfterNext: the client sets the rpcinfo's
// RemoteAddr and LocalAddr (and a retry's SeqID) inside next, after the
// middleware has started, so a goroutine a middleware hands the rpcinfo to
// (a watchdog logging slow calls) raced with those writes while next ran.
// rpcinfo and WithMiddleware now say so: these fields are the attempt's,
// and another goroutine reads them once next has returned. This pins that
// pattern, race-free under -race, on every pool, with the fields set.
func TestRPCInfoAttemptFieldsAfterNext(t *testing.T) {
	srv := startServer(t)
	type seen struct {
		seq           int32
		remote, local bool
	}
	got := make(chan seen, 1)
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			ri := rpcinfo.FromContext(ctx)
			err := next(ctx, req, resp)
			done := make(chan struct{})
			go func() { // a watchdog reading the call's info once next returned
				got <- seen{ri.SeqID, ri.RemoteAddr != nil, ri.LocalAddr != nil}
				close(done)
			}()
			<-done
			return err
		}
	}
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, srv.Addr(), s, client.WithMiddleware(mw))
			if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			if g := <-got; g.seq == 0 || !g.remote || !g.local {
				t.Fatalf("after next: SeqID %d, RemoteAddr set %v, LocalAddr set %v; want all set", g.seq, g.remote, g.local)
			}
		})
	}
}
