package client_test

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

func muxClient(tb testing.TB, addr string, conns int, opts ...client.Option) *client.Client {
	return newClient(tb, addr, setup{proto: transport.TTHeader, pool: client.WithMuxConnection(conns)}, opts...)
}

// TestMuxConcurrentCallersGetTheirOwnReplies runs 100 callers on 2 shared
// connections; the server answers some calls late (out of order), and every
// caller must get the reply to its own request.
func TestMuxConcurrentCallersGetTheirOwnReplies(t *testing.T) {
	srv := startServer(t)
	c := muxClient(t, srv.Addr(), 2, client.WithRPCTimeout(10*time.Second))
	const callers, calls = 100, 20
	var wg sync.WaitGroup
	var failed atomic.Int32
	for g := range callers {
		wg.Go(func() {
			res := new(echoResult)
			args := new(echoArgs)
			for i := range calls {
				args.Msg = []byte("caller " + strconv.Itoa(g) + " call " + strconv.Itoa(i))
				args.SleepMs = 0
				if (g+i)%7 == 0 {
					args.SleepMs = int32(1 + (g+i)%5) // answered out of order
				}
				if err := c.Call(context.Background(), "echo", false, args, res); err != nil {
					t.Errorf("caller %d call %d: %v", g, i, err)
					failed.Add(1)
					return
				}
				if !bytes.Equal(res.Success, args.Msg) {
					t.Errorf("caller %d call %d got %q, want %q", g, i, res.Success, args.Msg)
					failed.Add(1)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := srv.accepted.Load(); n > 2 {
		t.Fatalf("%d connections for a mux pool of 2", n)
	}
	if n := srv.requests.Load(); n != callers*calls {
		t.Fatalf("the server read %d requests, want %d", n, callers*calls)
	}
	sends, flushes := client.MuxWrites(c)
	t.Logf("%d requests written with %d flushes", sends, flushes)
	if sends != callers*calls || flushes >= sends {
		t.Fatalf("%d requests written with %d flushes: concurrent writes were not batched", sends, flushes)
	}
}

// TestMuxResetFailsOnlyTheCallsOnThatConnection: the server resets one of
// two shared connections while calls wait on both. The calls on it fail with
// a Connection error, the calls on the other one succeed, and the pool dials
// a replacement for later calls.
func TestMuxResetFailsOnlyTheCallsOnThatConnection(t *testing.T) {
	srv := startServer(t)
	c := muxClient(t, srv.Addr(), 2, client.WithRPCTimeout(5*time.Second))
	ctx := context.Background()
	// Open both connections.
	for range 2 {
		if _, err := echo(ctx, c, &echoArgs{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
	// 20 slow calls spread over the two connections (round robin).
	const slow = 20
	errs := make([]error, slow)
	var wg sync.WaitGroup
	for i := range slow {
		wg.Go(func() {
			msg := []byte("slow " + strconv.Itoa(i))
			res, err := echo(ctx, c, &echoArgs{Msg: msg, SleepMs: 300})
			if err == nil && !bytes.Equal(res.Success, msg) {
				t.Errorf("slow call %d got %q", i, res.Success)
			}
			errs[i] = err
		})
	}
	time.Sleep(100 * time.Millisecond) // all slow calls are waiting
	// This call lands on one connection; the server resets it.
	if _, err := echo(ctx, c, &echoArgs{Mode: modeReset}); rpcerr.CodeOf(err) != rpcerr.Connection {
		t.Fatalf("the call whose connection was reset: %v", err)
	}
	wg.Wait()
	var ok, broken int
	for i, err := range errs {
		switch rpcerr.CodeOf(err) {
		case rpcerr.OK:
			ok++
		case rpcerr.Connection:
			broken++
		default:
			t.Fatalf("slow call %d: %v, want success or a connection error", i, err)
		}
	}
	if ok == 0 || broken == 0 || ok+broken != slow {
		t.Fatalf("%d calls succeeded and %d failed; want the calls of one connection to fail and the others to succeed", ok, broken)
	}
	t.Logf("%d calls on the surviving connection succeeded, %d on the reset one failed", ok, broken)
	// The pool replaces the broken connection.
	for i := range 4 {
		if _, err := echo(ctx, c, &echoArgs{Msg: []byte("after")}); err != nil {
			t.Fatalf("call %d after the reset: %v", i, err)
		}
	}
	if n := srv.accepted.Load(); n != 3 {
		t.Fatalf("%d connections accepted, want 3 (one replacement)", n)
	}
}

// TestMuxLateRepliesAreDropped: replies to calls that timed out arrive
// while other calls wait; nobody gets a reply that is not theirs.
func TestMuxLateRepliesAreDropped(t *testing.T) {
	srv := startServer(t)
	c := muxClient(t, srv.Addr(), 1, client.WithRPCTimeout(5*time.Second))
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			_, err := echo(ctx, c, &echoArgs{Msg: []byte("late"), SleepMs: 60}, client.WithCallTimeout(20*time.Millisecond))
			if rpcerr.CodeOf(err) != rpcerr.Timeout {
				t.Errorf("call %d: %v, want a timeout", i, err)
			}
		})
	}
	wg.Wait()
	for i := range 20 {
		msg := []byte("fresh " + strconv.Itoa(i))
		res, err := echo(ctx, c, &echoArgs{Msg: msg, SleepMs: int32(i % 3)})
		if err != nil || !bytes.Equal(res.Success, msg) {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	if n := srv.accepted.Load(); n != 1 {
		t.Fatalf("timeouts cost connections: %d accepted, want 1", n)
	}
}

// TestMuxDrainsFlaggedConnection: a reply carrying the server's drop flag
// retires its connection; later calls use a new one.
func TestMuxDrainsFlaggedConnection(t *testing.T) {
	srv := startServer(t)
	c := muxClient(t, srv.Addr(), 1)
	ctx := context.Background()
	if _, err := echo(ctx, c, &echoArgs{Mode: modeDrop}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := echo(ctx, c, &echoArgs{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Fatalf("%d connections accepted, want 2", n)
	}
	deadline := time.Now().Add(2 * time.Second)
	for client.MuxConns(c) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still read, want the drained one closed", client.MuxConns(c))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMuxPeerCloseFailsPendingCalls: a graceful close by the server fails
// the calls waiting on the connection with a Connection error.
func TestMuxPeerCloseFailsPendingCalls(t *testing.T) {
	srv := startServer(t)
	c := muxClient(t, srv.Addr(), 1)
	ctx := context.Background()
	var wg sync.WaitGroup
	var connErrs atomic.Int32
	for range 5 {
		wg.Go(func() {
			_, err := echo(ctx, c, &echoArgs{SleepMs: 500})
			if rpcerr.CodeOf(err) == rpcerr.Connection {
				connErrs.Add(1)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := echo(ctx, c, &echoArgs{Mode: modeClose}); rpcerr.CodeOf(err) != rpcerr.Connection {
		t.Fatalf("the closing call: %v", err)
	}
	wg.Wait()
	if connErrs.Load() != 5 {
		t.Fatalf("%d of 5 waiting calls failed with a connection error", connErrs.Load())
	}
}
