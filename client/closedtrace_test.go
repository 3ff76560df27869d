package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// TestCallOnClosedClientIsTraced: WithTracer's doc says the client reports
// every call to the tracer, but a Call on a closed client returned its
// error before Start: contrib/metrics' petrel_requests_total never counted
// these failed calls, nor did tracing record them.
func TestCallOnClosedClientIsTraced(t *testing.T) {
	_, addr := startPetrel(t)
	tr := &finishCounter{}
	c := newClient(t, addr, setup{"long/ttheader", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})}, client.WithTracer(tr))
	c.Close()
	_, err := echo(context.Background(), c, &echoArgs{Msg: []byte("x")})
	if rpcerr.CodeOf(err) != rpcerr.Connection || !strings.Contains(err.Error(), "client is closed") {
		t.Fatalf("a call on a closed client: %v, want a Connection error saying the client is closed", err)
	}
	if tr.starts != 1 || tr.finishes != 1 || tr.err != err {
		t.Fatalf("a failed call on a closed client: tracer saw %d Start and %d Finish calls (error %v), want 1 and 1 with the call's error", tr.starts, tr.finishes, tr.err)
	}
}
