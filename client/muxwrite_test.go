package client_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// heldArgs is echoArgs whose encoding (under the multiplexed connection's
// write lock) signals entered and then waits for release.
type heldArgs struct {
	echoArgs
	entered, release chan struct{}
}

func (a *heldArgs) FastWrite(b []byte) int {
	close(a.entered)
	<-a.release
	return a.echoArgs.FastWrite(b)
}

// overstatedArgs announces 8 bytes more than it writes: its encoding fails.
type overstatedArgs struct{ echoArgs }

func (a *overstatedArgs) BLength() int { return a.echoArgs.BLength() + 8 }

// TestMuxFailedEncodingFlushesOthers: caller A writes its frame while B is
// queued for the write lock, so A leaves the flush to B; B's request fails
// to encode. B must still flush A's frame (before, A's request stayed in the
// output buffer and A timed out against a healthy server).
func TestMuxFailedEncodingFlushesOthers(t *testing.T) {
	srv := startServer(t)
	c := muxClient(t, srv.Addr(), 1, client.WithRPCTimeout(5*time.Second))
	ctx := context.Background()
	if _, err := echo(ctx, c, &echoArgs{}); err != nil { // opens the connection
		t.Fatal(err)
	}
	a := &heldArgs{echoArgs: echoArgs{Msg: []byte("A")}, entered: make(chan struct{}), release: make(chan struct{})}
	var wg sync.WaitGroup
	var errA, errB error
	wg.Go(func() {
		errA = c.Call(ctx, "echo", false, a, new(echoResult), client.WithCallTimeout(2*time.Second))
	})
	<-a.entered // A holds the write lock
	wg.Go(func() {
		errB = c.Call(ctx, "echo", false, &overstatedArgs{}, new(echoResult))
	})
	time.Sleep(100 * time.Millisecond) // B waits for the write lock
	close(a.release)
	wg.Wait()
	if errA != nil {
		t.Fatalf("A, a good request: %v", errA)
	}
	if errB == nil {
		t.Fatal("B, a request that cannot be encoded, succeeded")
	}
}

// TestMuxFlushBoundedByCallDeadline: a server that never reads. A large
// request fills the socket; its flush ends at the call's deadline (here
// its context's: the client has no RPC timeout), not at Close.
func TestMuxFlushBoundedByCallDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if conn, err := ln.Accept(); err == nil {
			accepted <- conn // never read
		}
	}()
	c, err := client.New("Echo", client.WithHostPorts(ln.Addr().String()),
		client.WithMuxConnection(1), client.WithRPCTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := make([]byte, 12<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx, "echo", false, &echoArgs{Msg: msg}, new(echoResult)) }()
	limit := time.NewTimer(2 * time.Second)
	defer limit.Stop()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a call whose request cannot leave succeeded")
		}
	case <-limit.C:
		c.Close() // ends the flush
		t.Fatalf("a call whose request cannot leave, with a 300ms deadline, still ran after 2s (then %v)", <-done)
	}
	select {
	case conn := <-accepted:
		conn.Close()
	case <-time.After(time.Second):
	}
}

// TestMuxStalledConnectionIsReplaced: the server answers the first
// request with the first 14 bytes of a TTHeader frame that declares 1000
// bytes, then sends nothing more and keeps the connection open. Calls time
// out on it; once it has read no reply for a second, a timed-out call
// retires it and later calls get a new connection.
func TestMuxStalledConnectionIsReplaced(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	var conns sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	conns.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			open = append(open, conn)
			mu.Unlock()
			conns.Go(func() {
				b := make([]byte, 64<<10)
				first := true
				for {
					if _, err := conn.Read(b); err != nil {
						return
					}
					if first {
						first = false
						// Length 996, magic 0x1000, flags 0, seq 1, header size 1 (4 bytes): 14 bytes of 1000.
						conn.Write([]byte{0, 0, 0x03, 0xe4, 0x10, 0x00, 0, 0, 0, 0, 0, 1, 0, 1})
					}
				}
			})
		}
	})
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		conns.Wait()
	}()
	c, err := client.New("Echo", client.WithHostPorts(ln.Addr().String()),
		client.WithMuxConnection(1), client.WithRPCTimeout(150*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	for accepted.Load() < 2 && time.Since(start) < 3*time.Second {
		c.Call(context.Background(), "echo", false, &echoArgs{}, new(echoResult))
	}
	if n := accepted.Load(); n < 2 {
		t.Fatalf("calls timed out on a stalled connection for %v (%d accepted): it was never replaced", time.Since(start), n)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("the connection was replaced after %v, before a second without replies", d)
	}
}

// TestMuxGiveUpSkipsOthersFlush: call A writes its small request while B,
// with a 16 MiB request and a later deadline, is queued behind it, so that
// B flushes both; the server reads nothing, so B's flush stalls until B's
// deadline. A, timing out or canceled, must return then, not when B's
// flush ends: its frame, copied whole into the output, holds none of its
// args' memory.
func TestMuxGiveUpSkipsOthersFlush(t *testing.T) {
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				if conn, err := ln.Accept(); err == nil {
					accepted <- conn // never read
				}
				close(accepted)
			}()
			c, err := client.New("Echo", client.WithHostPorts(ln.Addr().String()),
				client.WithMuxConnection(1), client.WithRPCTimeout(0))
			if err != nil {
				t.Fatal(err)
			}
			bDone := make(chan error, 1)
			defer func() {
				c.Close() // ends B's flush
				<-bDone
				if conn := <-accepted; conn != nil {
					conn.Close()
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var opts []client.CallOption
			if how == "timeout" {
				opts = append(opts, client.WithCallTimeout(200*time.Millisecond))
			}
			a := &heldArgs{echoArgs: echoArgs{Msg: []byte("A")}, entered: make(chan struct{}), release: make(chan struct{})}
			aDone := make(chan error, 1)
			go func() { aDone <- c.Call(ctx, "echo", false, a, new(echoResult), opts...) }()
			<-a.entered // A holds the write lock
			go func() {
				bDone <- c.Call(context.Background(), "echo", false, &echoArgs{Msg: make([]byte, 16<<20)}, new(echoResult),
					client.WithCallTimeout(20*time.Second))
			}()
			time.Sleep(50 * time.Millisecond) // B queues for the write lock
			close(a.release)
			start := time.Now()
			if how == "cancel" {
				time.Sleep(200 * time.Millisecond)
				cancel()
			}
			timer := time.NewTimer(10 * time.Second)
			defer timer.Stop()
			select {
			case err := <-aDone:
				if took := time.Since(start); took > 2*time.Second {
					t.Fatalf("A returned %v after its write, with %v: it waited for B's stalled flush", took, err)
				}
				if want := map[string]rpcerr.Code{"timeout": rpcerr.Timeout, "cancel": rpcerr.Canceled}[how]; rpcerr.CodeOf(err) != want {
					t.Fatalf("A returned %v, want a %v error", err, want)
				}
			case <-timer.C:
				t.Fatal("A did not return")
			}
		})
	}
}
