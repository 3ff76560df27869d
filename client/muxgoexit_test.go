package client_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// goexitResult is a result whose (hand-written) codec ends its goroutine on
// reading, as a test double calling t.FailNow does.
type goexitResult struct{ echoResult }

func (*goexitResult) FastRead([]byte) (int, error) {
	runtime.Goexit()
	return 0, nil
}

// TestResultCodecGoexitOnMux: a multiplexed connection decodes replies on
// its reader goroutine, which a result codec calling runtime.Goexit ends.
// The caller must not wait for ever for a reply the reader took and never
// handed over: its goroutine ends too, as it would with the other pools,
// which decode on the caller's goroutine. The connection, left without a
// reader, is closed, and the next call works on a new one. Before, the
// caller hung past its timeout and later calls timed out on the
// connection nobody read.
func TestResultCodecGoexitOnMux(t *testing.T) {
	srv := startServer(t)
	c := newClient(t, srv.Addr(), setup{"mux", transport.TTHeader, client.WithMuxConnection(1)},
		client.WithRPCTimeout(time.Second))
	ctx := context.Background()
	if _, err := echo(ctx, c, &echoArgs{Msg: []byte("first")}); err != nil {
		t.Fatal(err)
	}
	ended := make(chan bool, 1)
	go func() {
		returned := false
		defer func() { ended <- returned }()
		c.Call(ctx, "echo", false, &echoArgs{Msg: []byte("x")}, &goexitResult{})
		returned = true
	}()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case returned := <-ended:
		if returned {
			t.Fatal("Call returned after the result codec called runtime.Goexit; its goroutine should have ended, as with the other pools")
		}
	case <-timer.C:
		t.Fatal("the call whose result codec called runtime.Goexit on the reader did not end within 5s (its RPC timeout is 1s)")
	}
	for i := range 3 {
		if res, err := echo(ctx, c, &echoArgs{Msg: []byte("ok")}); err != nil || string(res.Success) != "ok" {
			t.Fatalf("call %d after the Goexit: %v %+v", i, err, res)
		}
	}
	if n := client.MuxConns(c); n != 1 {
		t.Fatalf("%d multiplexed connections after the Goexit, want 1 (its replacement)", n)
	}
}
