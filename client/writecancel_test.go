package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
)

// TestCancelEndsCallWritingRequest: a call whose request (8 MiB) waits for
// room in the socket of a server that never reads ends soon after its
// context (which has no deadline) is canceled, on the short and long
// pools, with or without an RPC timeout, with a Canceled error wrapping
// context.Canceled that says it was writing the request. The connection,
// which holds part of a request, is closed, not kept. Before, the Flush
// ignored the cancel and waited until the RPC timeout, or for good.
func TestCancelEndsCallWritingRequest(t *testing.T) {
	msg := []byte(strings.Repeat("x", 8<<20))
	for _, s := range setups() {
		if strings.HasPrefix(s.name, "mux/") {
			continue
		}
		for _, rpcTimeout := range []time.Duration{0, time.Minute} {
			name := s.name + "/no rpc timeout"
			if rpcTimeout > 0 {
				name = s.name + "/rpc timeout 1m"
			}
			t.Run(name, func(t *testing.T) {
				srv := startDeafServer(t)
				c := newClient(t, srv.addr(), s, client.WithRPCTimeout(rpcTimeout))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				res := make(chan error, 1)
				go func() {
					_, err := echo(ctx, c, &echoArgs{Msg: msg})
					res <- err
				}()
				<-srv.got
				// Time for the request to fill the socket buffers; the
				// call goes on waiting whether or not it has yet.
				wait := time.NewTimer(50 * time.Millisecond)
				select {
				case err := <-res:
					t.Fatalf("the call to a server that does not read ended before the cancel: %v", err)
				case <-wait.C:
				}
				cancelCall(t, res, cancel, name, "writing the request")
				if st := c.PoolStats(); st.Open != 0 || st.Idle != 0 {
					t.Errorf("PoolStats() = %+v after the call canceled mid-request, want no connection kept", st)
				}
			})
		}
	}
}
