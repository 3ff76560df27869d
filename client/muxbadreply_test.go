package client_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// TestMuxBadReplyRetiresConnection: a reply under a pending call's
// sequence id that is not that call's (another method's name, or a message
// type other than REPLY and EXCEPTION) shows that the server mismatches
// sequence ids on the multiplexed connection, so that a reply to another
// call of the same method could be taken for this one's unnoticed. The call
// fails with a Protocol error; the connection takes no new call, the calls
// in flight on it still get their replies, and it closes after the last.
func TestMuxBadReplyRetiresConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode int32
	}{{"wrong name", modeWrongName}, {"call type", modeCallType}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), setup{"mux", transport.TTHeader, client.WithMuxConnection(1)},
				client.WithRPCTimeout(5*time.Second))
			if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("first")}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var slowErr error
			var slow *echoResult
			wg.Go(func() {
				slow, slowErr = echo(context.Background(), c, &echoArgs{Msg: []byte("slow"), SleepMs: 300})
			})
			waitFor(t, "the slow call to reach the server", func() bool { return srv.requests.Load() == 2 })
			_, err := echo(context.Background(), c, &echoArgs{Mode: tc.mode})
			if rpcerr.CodeOf(err) != rpcerr.Protocol {
				t.Fatalf("got %v (code %v), want a protocol error", err, rpcerr.CodeOf(err))
			}
			if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("after")}); err != nil {
				t.Fatalf("the call after: %v", err)
			}
			if n := srv.accepted.Load(); n != 2 {
				t.Fatalf("the call after the bad reply went over connection %d, want a new one (2)", n)
			}
			wg.Wait()
			if slowErr != nil || string(slow.Success) != "slow" {
				t.Fatalf("the call in flight on the retired connection: %v (result %q), want its reply", slowErr, slow.Success)
			}
			waitFor(t, "the retired connection to close", func() bool { return client.MuxConns(c) == 1 })
		})
	}
}
