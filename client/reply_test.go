package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
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

// TestBadReplyErrorsNameTheCall: the error of a reply that is not the
// call's (another sequence id, a message of type CALL) says which method's
// call it was and which server sent it; the long pool drops the connection.
func TestBadReplyErrorsNameTheCall(t *testing.T) {
	cases := []struct {
		name string
		mode int32
		want []string
	}{
		{"wrong seq", modeWrongSeq, []string{"echo", "sequence id"}},
		{"call type", modeCallType, []string{"echo", "message type 1"}},
	}
	for _, s := range setups() {
		for _, tc := range cases {
			if tc.mode == modeWrongSeq && strings.HasPrefix(s.name, "mux") {
				continue // a reply to no pending call is dropped; the call times out
			}
			t.Run(s.name+"/"+tc.name, func(t *testing.T) {
				srv := startServer(t)
				c := newClient(t, srv.Addr(), s, client.WithRPCTimeout(5*time.Second))
				_, err := echo(context.Background(), c, &echoArgs{Mode: tc.mode})
				if rpcerr.CodeOf(err) != rpcerr.Protocol {
					t.Fatalf("got %v (code %v), want a protocol error", err, rpcerr.CodeOf(err))
				}
				for _, w := range append(tc.want, srv.Addr()) {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("error %q does not say %q", err, w)
					}
				}
				if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("after")}); err != nil {
					t.Fatalf("the call after: %v", err)
				}
				if n := srv.accepted.Load(); strings.HasPrefix(s.name, "long") && n != 2 {
					t.Fatalf("the long pool dialed %d connections, want 2: the one that got the bad reply was kept", n)
				}
			})
		}
	}
}

// TestFailedConnectionErrorsNameTheCall: a call whose connection fails
// (reset by the server, or a reply over WithMaxMessageSize) says which
// method's call it was and which server it was sent to, on every pool.
func TestFailedConnectionErrorsNameTheCall(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startServer(t)
			c := newClient(t, srv.Addr(), s, client.WithMaxMessageSize(1024))
			for _, args := range []*echoArgs{{Mode: modeReset}, {Mode: modeHuge, Size: 4096}} {
				_, err := echo(context.Background(), c, args)
				if err == nil {
					t.Fatalf("mode %d: no error", args.Mode)
				}
				for _, w := range []string{"echo", srv.Addr()} {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("mode %d: error %q does not say %q", args.Mode, err, w)
					}
				}
			}
		})
	}
}
