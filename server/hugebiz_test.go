package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
)

// bizEchoHandler answers with a business status whose message is the
// request's, and whose extra holds the action under "a".
type bizEchoHandler struct{}

func (bizEchoHandler) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	return nil, rpcerr.NewBizStatusError(4001, req.Msg).SetExtra("a", req.Action)
}
func (bizEchoHandler) Notify(context.Context, string) error { return nil }

// TestHugeBizStatus: a business status whose message (or extra) is larger
// than a TTHeader holds keeps its status code: the message is cut, at a
// character's boundary, and the extra left out. It reached the caller as an
// INTERNAL_ERROR, its code lost, which circuit breakers count as a failure.
func TestHugeBizStatus(t *testing.T) {
	_, addr := startWith(t, server.New(), bizEchoHandler{})
	c, err := echotest.NewEchoClient("svc", client.WithHostPorts(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct{ msg, action string }{
		{strings.Repeat("é", 40000), "small"}, // 80,000 bytes of two-byte characters
		{"small", strings.Repeat("x", 70000)},
	} {
		_, err = c.Echo(context.Background(), &echotest.Request{Msg: tc.msg, Action: tc.action})
		var biz *rpcerr.BizStatusError
		if !errors.As(err, &biz) || biz.StatusCode != 4001 {
			t.Fatalf("message of %d bytes, extra of %d: got %v (code %v), want business status 4001", len(tc.msg), len(tc.action), rpcerr.CodeOf(err), err)
		}
		if len(tc.msg) > 20000 {
			if len(biz.Message) > 16<<10 || !strings.HasSuffix(biz.Message, "(cut)") || !strings.HasPrefix(biz.Message, "éé") || strings.ContainsRune(biz.Message, '\uFFFD') {
				t.Errorf("a cut message of %d bytes: %.40q...%q", len(biz.Message), biz.Message, biz.Message[max(0, len(biz.Message)-20):])
			}
		} else if biz.Message != tc.msg || biz.Extra["a"] != "" {
			t.Errorf("message %q, extra of %d bytes: want the message whole, the extra left out", biz.Message, len(biz.Extra["a"]))
		}
	}
}
