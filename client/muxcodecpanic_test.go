package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
)

// stallingPanicArgs is a request whose (hand-written) codec says it has
// begun, waits for release and then panics: the call is registered on its
// multiplexed connection and holds the write lock meanwhile.
type stallingPanicArgs struct {
	echoArgs
	entered, release chan struct{}
}

func (a *stallingPanicArgs) FastWrite([]byte) int {
	close(a.entered)
	<-a.release
	panic("args codec bug")
}

// TestMuxCodecPanicAsConnFails: the connection fails while a request's
// codec runs, and the codec then panics (a middleware recovers it). The
// connection's shutdown has failed the call, signalling it; the signal
// must not stay with the call's state, which is pooled: a later call that
// got the state returned at once with no reply, as a success, and left its
// registration behind for its reply to be handed to whichever call had the
// state next.
func TestMuxCodecPanicAsConnFails(t *testing.T) {
	srv := startRawServer(t, func(s *rawServer, _ int32, conn net.Conn) {
		b := make([]byte, 4096)
		for {
			if _, err := conn.Read(b); err != nil {
				return
			}
		}
	}) // reads and never answers
	recovering := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) (err error) {
			defer func() {
				if recover() != nil {
					err = nil
				}
			}()
			return next(ctx, req, resp)
		}
	}
	c, err := client.New("Echo", client.WithHostPorts(srv.addr()), client.WithMuxConnection(1),
		client.WithMiddleware(recovering), client.WithRPCTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	// sync.Pool does not always give the same goroutine the state it put
	// back (and under -race drops some): hence rounds.
	for round := range 5 {
		// Opens the connection; times out.
		c.Call(ctx, "echo", false, &echoArgs{}, new(echoResult), client.WithCallTimeout(20*time.Millisecond))
		a := &stallingPanicArgs{entered: make(chan struct{}), release: make(chan struct{})}
		done := make(chan int)
		go func() {
			c.Call(ctx, "echo", false, a, new(echoResult)) // panics, recovered
			// Likely to get the state just put back.
			succeeded := 0
			for range 4 {
				if c.Call(ctx, "echo", false, &echoArgs{Msg: []byte("x")}, new(echoResult), client.WithCallTimeout(50*time.Millisecond)) == nil {
					succeeded++
				}
			}
			done <- succeeded
		}()
		<-a.entered
		srv.mu.Lock()
		for _, conn := range srv.conns {
			conn.Close()
		}
		srv.conns = nil
		srv.mu.Unlock()
		waitFor(t, "the client to see the connection closed", func() bool { return client.MuxConns(c) == 0 })
		close(a.release)
		if n := <-done; n > 0 {
			t.Fatalf("round %d: %d calls to a server that never answers succeeded", round, n)
		}
		if n := client.MuxPending(c); n != 0 {
			t.Fatalf("round %d: %d calls still registered after every call returned", round, n)
		}
	}
}
