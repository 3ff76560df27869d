package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestReplyOfAnotherMethodIsRefused: a reply under the call's sequence id
// but another method's name is not the call's reply: decoding it into the
// call's result could fill it with another method's fields. The call fails
// with a Protocol error naming both names.
func TestReplyOfAnotherMethodIsRefused(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s)
			res, err := echo(context.Background(), c, &echoArgs{Mode: modeWrongName, Msg: []byte("x")})
			if rpcerr.CodeOf(err) != rpcerr.Protocol {
				t.Fatalf("a reply named other to a call of echo: got %v (code %v, result %+v), want a protocol error", err, rpcerr.CodeOf(err), res)
			}
			for _, want := range []string{`"echo"`, `"other"`} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not name %s", err, want)
				}
			}
			if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("after")}); err != nil {
				t.Fatalf("the call after: %v", err)
			}
		})
	}
}
