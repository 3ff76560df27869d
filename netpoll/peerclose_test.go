//go:build linux

package netpoll_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestDialedKeepsInputAfterPeerClose: what the peer sent before closing
// stays readable on a dialed connection, however late the reader comes.
func TestDialedKeepsInputAfterPeerClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	msg := bytes.Repeat([]byte("reply-"), 1000)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write(msg)
			c.Close()
		}
	}()
	for i := 0; i < 50; i++ {
		c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// Let the reply and the close arrive before reading.
		for deadline := time.Now().Add(time.Second); c.IsActive() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		got, err := c.Reader().Next(len(msg))
		if err != nil {
			t.Fatalf("connection %d: reading the %d bytes sent before the close: %v", i, len(msg), err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("connection %d: read wrong bytes", i)
		}
		if _, err := c.Reader().Next(1); !errors.Is(err, io.EOF) {
			t.Fatalf("connection %d: after the reply: %v, want EOF", i, err)
		}
		c.Close()
	}
}

// TestResetDuringHandlerDoesNotSpin: a connection reset by its peer while
// its handler still runs costs no CPU until the handler returns (epoll
// reports a hang-up on every wait, asked or not; the poller must not wake
// for it over and over).
func TestResetDuringHandlerDoesNotSpin(t *testing.T) {
	inHandler, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	_, addr := serve(t, netpoll.Config{
		OnRequest: func(_ context.Context, c netpoll.Connection) error {
			c.Reader().Skip(c.Reader().Len())
			c.Reader().Release()
			inHandler <- struct{}{}
			<-release
			return nil
		},
	})
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	<-inHandler
	raw.(*net.TCPConn).SetLinger(0)
	raw.Close()
	time.Sleep(50 * time.Millisecond) // the reset arrives
	before := cpuTime()
	time.Sleep(300 * time.Millisecond)
	if used := cpuTime() - before; used > 100*time.Millisecond {
		t.Fatalf("the process used %v of CPU in 300ms while a handler held a reset connection", used)
	}
}

// TestCloseCallbacks: callbacks run once each, newest first, when the
// connection closes, whether the peer or the user closes it; one added
// after the close runs at once.
func TestCloseCallbacks(t *testing.T) {
	c, sc, _, _ := silentPair(t)
	var mu sync.Mutex
	var order []string
	record := func(name string) func(netpoll.Connection) error {
		return func(netpoll.Connection) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return nil
		}
	}
	ran := make(chan struct{})
	for _, conn := range []netpoll.Connection{c, sc} {
		if err := conn.AddCloseCallback(nil); err == nil {
			t.Error("AddCloseCallback(nil): no error")
		}
	}
	c.AddCloseCallback(func(netpoll.Connection) error { close(ran); return nil })
	c.AddCloseCallback(record("client first"))
	c.AddCloseCallback(record("client second"))
	sc.AddCloseCallback(record("server"))

	sc.Close() // the server's closes locally; the client's peer closed
	timeout := time.NewTimer(2 * time.Second)
	defer timeout.Stop()
	select {
	case <-ran:
	case <-timeout.C:
		t.Fatal("the dialed connection's callbacks did not run after the peer's close")
	}
	c.Close() // no second run
	c.AddCloseCallback(record("client late"))
	// Each connection's callbacks in order; the two connections' relative
	// order is not defined (the client may see the close first).
	mu.Lock()
	var client []string
	for _, name := range order {
		if strings.HasPrefix(name, "client") {
			client = append(client, name)
		}
	}
	all := strings.Join(order, ", ")
	mu.Unlock()
	if got, want := strings.Join(client, ", "), "client second, client first, client late"; got != want || len(order) != 4 {
		t.Errorf("callbacks ran as %q, want %q and the server's once", all, want)
	}
}

// TestInputBeforeSlowOnConnectIsServed: requests that arrive, with the
// peer's close, while OnConnect still runs are handed to OnRequest once it
// is done, not dropped.
func TestInputBeforeSlowOnConnectIsServed(t *testing.T) {
	_, addr := serve(t, netpoll.Config{
		OnConnect: func(ctx context.Context, c netpoll.Connection) context.Context {
			time.Sleep(50 * time.Millisecond)
			return ctx
		},
		OnRequest: echo,
	})
	got, err := halfCloseExchange(t, addr, "hello")
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v; want the echo of %q", got, err, "hello")
	}
}

// TestHoldKeepsPeerClosedConnectionOpen: a reply written after OnRequest
// returned, by a goroutine holding the connection, still reaches a peer
// that shut down its sending side; the connection closes after Unhold.
func TestHoldKeepsPeerClosedConnectionOpen(t *testing.T) {
	done := make(chan struct{})
	_, addr := serve(t, netpoll.Config{
		OnRequest: func(_ context.Context, c netpoll.Connection) error {
			r := c.Reader()
			in, err := r.Next(r.Len())
			if err != nil {
				return err
			}
			msg := string(in)
			r.Release()
			c.Hold()
			go func() {
				defer close(done)
				defer c.Unhold()
				time.Sleep(50 * time.Millisecond)
				c.Write([]byte("late " + msg))
			}()
			return nil
		},
	})
	got, err := halfCloseExchange(t, addr, "hello") // to EOF: it closes after Unhold
	if err != nil || string(got) != "late hello" {
		t.Fatalf("read %q, %v; want %q and the close", got, err, "late hello")
	}
	<-done
}

// halfCloseExchange dials addr, sends msg, shuts down its sending side and
// returns everything it reads until the server closes (5 s at most).
func halfCloseExchange(t *testing.T, addr, msg string) ([]byte, error) {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	raw.(*net.TCPConn).CloseWrite()
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	return io.ReadAll(raw)
}

// TestPausedPeerCloseDoesNotSpin: a connection whose input reached the cap
// (reading paused) and whose peer then closes costs no CPU while the handler
// holds it (over a Unix socket epoll reports the hang-up on every wait,
// whatever the interest), and everything the peer sent is still served once
// the handler drains.
func TestPausedPeerCloseDoesNotSpin(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "unix" {
				addr = t.TempDir() + "/s"
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			const size = 64 << 10
			entered, release := make(chan struct{}, 1), make(chan struct{})
			var mu sync.Mutex
			got := 0
			all := make(chan struct{})
			loop, err := netpoll.NewEventLoop(netpoll.Config{
				InputCap: 4096,
				OnRequest: func(_ context.Context, c netpoll.Connection) error {
					select {
					case entered <- struct{}{}:
					default:
					}
					<-release
					n := c.Reader().Len()
					c.Reader().Skip(n)
					c.Reader().Release()
					mu.Lock()
					if got += n; got == size {
						close(all)
					}
					mu.Unlock()
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- loop.Serve(ln) }()
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				loop.Shutdown(ctx)
				<-done
			}()
			c, err := net.Dial(network, ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			c.Write(make([]byte, size))
			<-entered
			time.Sleep(100 * time.Millisecond) // read up to the cap, then paused
			c.Close()
			time.Sleep(50 * time.Millisecond)
			before := cpuTime()
			time.Sleep(300 * time.Millisecond)
			used := cpuTime() - before
			close(release)
			if used > 100*time.Millisecond {
				t.Fatalf("the process used %v of CPU in 300ms while a paused connection's peer had closed", used)
			}
			timer := time.NewTimer(2 * time.Second)
			defer timer.Stop()
			select {
			case <-all:
			case <-timer.C:
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("served %d of the %d bytes sent before the peer closed", got, size)
			}
		})
	}
}
