package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// bizZeroHandler fails every call with a business status error of code 0.
type bizZeroHandler struct{}

func (bizZeroHandler) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	return nil, rpcerr.NewBizStatusError(0, "denied")
}
func (bizZeroHandler) Notify(context.Context, string) error { return nil }

// TestBizStatusZeroIsAnError: a handler's *rpcerr.BizStatusError with status code
// 0 is a failure (the handler returned an error), and over Framed the
// Petrel client sees it as one (an INTERNAL_ERROR exception). Over TTHeader
// the server sent it as a normal reply with biz-status "0", which the
// client (as documented, like Kitex) takes for no error: the failure
// vanished, and the generated stub reported a missing result instead. It
// now goes as over Framed.
func TestBizStatusZeroIsAnError(t *testing.T) {
	_, addr := startWith(t, server.New(), bizZeroHandler{})
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader} {
		c, err := client.New("svc", client.WithHostPorts(addr), client.WithTransport(p))
		if err != nil {
			t.Fatal(err)
		}
		var args echotest.EchoEchoArgs
		args.Req = &echotest.Request{Action: "x"}
		var res echotest.EchoEchoResult
		err = c.Call(context.Background(), "echo", false, &args, &res)
		c.Close()
		if err == nil {
			t.Errorf("%v: the handler failed with a business status error, but Call returned nil (result %+v)", p, res)
		} else if code := rpcerr.CodeOf(err); code != rpcerr.Application || !strings.Contains(err.Error(), "denied") {
			t.Errorf("%v: Call returned %v (code %v), want an application error saying denied", p, err, code)
		}
	}
}
