package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// cancelCall cancels the call whose error comes on res and checks that it
// ends within a second with a Canceled error wrapping context.Canceled whose
// text holds what (where the call was waiting).
func cancelCall(t *testing.T, res <-chan error, cancel func(), name, what string) {
	t.Helper()
	start := time.Now()
	cancel()
	err := callResult(t, res, 2*time.Second, name)
	if d := time.Since(start); d > time.Second {
		t.Errorf("the call ended %v after the cancel", d)
	}
	if !errors.Is(err, context.Canceled) || rpcerr.CodeOf(err) != rpcerr.Canceled {
		t.Fatalf("the canceled call returned %v (code %v), want a Canceled error wrapping context.Canceled", err, rpcerr.CodeOf(err))
	}
	if !strings.Contains(err.Error(), what) {
		t.Errorf("the canceled call's error %q does not say %q", err, what)
	}
}

// callResult waits up to limit for a call's error.
func callResult(t *testing.T, res <-chan error, limit time.Duration, what string) error {
	t.Helper()
	tm := time.NewTimer(limit)
	defer tm.Stop()
	select {
	case err := <-res:
		return err
	case <-tm.C:
		t.Fatalf("%s: the call still waits %v after its context was canceled", what, limit)
		return nil
	}
}

// TestCancelEndsCallWaitingForReply: a call waiting for the reply of a
// server that never answers ends at once when its context (which has no
// deadline) is canceled, on every pool and transport, with or without an
// RPC timeout, with an error that wraps context.Canceled. The short and
// long pools then hold no connection for it (the connection is out of step
// and closed), and the next call goes out on a new connection and gets
// its reply. Before, the short and long pools' calls waited until the RPC
// timeout, or for good without one.
func TestCancelEndsCallWaitingForReply(t *testing.T) {
	live := startServer(t)
	for _, s := range setups() {
		for _, rpcTimeout := range []time.Duration{0, time.Minute} {
			name := s.name + "/no rpc timeout"
			if rpcTimeout > 0 {
				name = s.name + "/rpc timeout 1m"
			}
			t.Run(name, func(t *testing.T) {
				srv := startFlipServer(t, live.Addr())
				c := newClient(t, srv.addr(), s, client.WithRPCTimeout(rpcTimeout))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				res := make(chan error, 1)
				go func() {
					_, err := echo(ctx, c, &echoArgs{Msg: []byte("hello")})
					res <- err
				}()
				<-srv.got // the request reached the server: the call waits for its reply
				cancelCall(t, res, cancel, name, "reply")
				if strings.HasPrefix(s.name, "mux/") {
					return // its connection is shared and stays
				}
				if open := c.PoolStats().Open; open != 0 {
					t.Errorf("PoolStats().Open = %d after the canceled call, want 0", open)
				}
				res2 := make(chan error, 1)
				go func() {
					r, err := echo(context.Background(), c, &echoArgs{Msg: []byte("again")}, client.WithCallTimeout(5*time.Second))
					if err == nil && string(r.Success) != "again" {
						err = errors.New("the reply echoed " + string(r.Success))
					}
					res2 <- err
				}()
				if err := callResult(t, res2, 10*time.Second, "the next call"); err != nil {
					t.Fatalf("the call after the canceled one: %v", err)
				}
				if n := srv.accepted.Load(); n != 2 {
					t.Errorf("the server accepted %d connections, want 2 (the canceled call's and a new one)", n)
				}
			})
		}
	}
}

// TestCanceledBeforeCall: a call whose context is canceled before it
// starts fails at once with a Canceled error, having dialed nothing.
func TestCanceledBeforeCall(t *testing.T) {
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			srv := startFlipServer(t, "127.0.0.1:1")
			c := newClient(t, srv.addr(), s, client.WithRPCTimeout(0))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			res := make(chan error, 1)
			go func() {
				_, err := echo(ctx, c, &echoArgs{Msg: []byte("hello")})
				res <- err
			}()
			err := callResult(t, res, 2*time.Second, s.name)
			if !errors.Is(err, context.Canceled) || rpcerr.CodeOf(err) != rpcerr.Canceled {
				t.Fatalf("the call returned %v, want a Canceled error wrapping context.Canceled", err)
			}
			if n := srv.accepted.Load(); n != 0 {
				t.Errorf("the server accepted %d connections, want none", n)
			}
			if open := c.PoolStats().Open; open != 0 {
				t.Errorf("PoolStats().Open = %d, want 0", open)
			}
		})
	}
}
