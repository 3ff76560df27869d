package server_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// A handler's error that wraps context.DeadlineExceeded (it gave up at its
// context's deadline, which is the caller's) reaches the caller as a
// timeout, not as the handler's failure, on every transport.
func TestHandlerDeadlineErrorIsTimeout(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range []transport.Protocol{transport.TTHeader, transport.Framed, transport.Buffered} {
		t.Run(p.String(), func(t *testing.T) {
			cli, err := echotest.NewEchoClient("Echo", client.WithHostPorts(addr), client.WithTransport(p))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			_, err = cli.Echo(context.Background(), &echotest.Request{Action: "ctxerr"})
			var ne net.Error
			if rpcerr.CodeOf(err) != rpcerr.Timeout || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("err = %v (code %v), want a Timeout error", err, rpcerr.CodeOf(err))
			}
			if !strings.Contains(err.Error(), "Echo.echo returned querying the store: context deadline exceeded") {
				t.Errorf("err = %v, want it to name the handler and give its error", err)
			}
		})
	}
}
