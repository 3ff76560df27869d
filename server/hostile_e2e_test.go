package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestMessageSizeBoundary: a request of exactly WithMaxMessageSize bytes is
// served on every protocol; one a byte larger is answered with an
// exception saying so, then the connection closes, without running the
// handler; the server goes on serving.
func TestMessageSizeBoundary(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			msg := strings.Repeat("m", 3000)
			exact := len(requestBytes(t, p, 1, msg))
			s, h, addr := startServer(t, server.WithMaxMessageSize(exact))
			c := dial(t, addr, p)
			if res, rep := c.call(1, "echo", msg, nil); rep.typ != thrift.REPLY || res.Success.GetMsg() != msg {
				t.Fatalf("a request of exactly the limit (%d bytes): %+v %+v", exact, rep, rep.ex)
			}
			before := h.calls.Load()
			over := dial(t, addr, p)
			args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: msg + "m"}}
			if err := over.send("echo", thrift.CALL, 2, args, nil); err != nil {
				t.Fatal(err)
			}
			rep, err := over.recv(nil)
			if want := oversizedText(p, exact+1, exact); err != nil || rep.typ != thrift.EXCEPTION || rep.seq != 2 || rep.ex.Message != want {
				t.Fatalf("a request a byte over the limit: %+v %+v, %v; want an exception %q", rep, rep.ex, err, want)
			}
			if _, err := over.recv(nil); err == nil {
				t.Fatal("the connection goes on after the oversized request")
			}
			if h.calls.Load() != before {
				t.Fatal("the handler ran for a request over the limit")
			}
			if res, _ := c.call(3, "echo", "still", nil); res.Success.GetMsg() != "still" {
				t.Fatalf("the first connection after another's oversized request: %+v", res)
			}
			if p := s.LastPanic(); p != "" {
				t.Fatal(p)
			}
		})
	}
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// busyGoroutines counts the goroutines other than the pool's idle workers.
func busyGoroutines() int {
	b := make([]byte, 1<<20)
	for {
		n := runtime.Stack(b, true)
		if n < len(b) {
			b = b[:n]
			break
		}
		b = make([]byte, 2*len(b))
	}
	count := 0
	for _, g := range strings.Split(string(b), "\n\n") {
		if strings.Contains(g, "gopool.(*worker).run") && strings.Contains(g, "[chan receive") {
			continue
		}
		count++
	}
	return count
}

// waitAtMost polls f until it is at most want or the deadline passes.
func waitAtMost(f func() int, want int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		got := f()
		if got <= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestChurnLeavesNothing: thousands of connections that close before
// sending, send half a frame and reset, or send a whole request and reset
// leave no goroutine or fd behind, and Stats add up.
func TestChurnLeavesNothing(t *testing.T) {
	s, _, addr := startServer(t, server.WithMaxConnections(50))
	// Warm up: the pool's workers and the loop's goroutines.
	for _, p := range protocols {
		dial(t, addr, p).call(1, "echo", "warm", nil)
	}
	if got := waitStat(func() int64 { return s.Stats().Connections }, 3); got != 3 {
		t.Fatalf("Connections = %d", got)
	}
	fd0, g0 := openFDs(t), busyGoroutines()
	req := requestBytes(t, transport.Framed, 7, "x")
	tt := requestBytes(t, transport.TTHeader, 7, "x")
	half := make([]byte, 6)
	binary.BigEndian.PutUint32(half, 100)
	churn(t, addr, 3000, 64, func(i int, tc *net.TCPConn) {
		switch i % 5 {
		case 1:
			tc.Write(half)
			tc.SetLinger(0)
		case 2:
			tc.Write(req)
			tc.SetLinger(0)
		case 3:
			tc.Write(tt[:len(tt)-1])
		case 4:
			tc.Write(tt)
			tc.SetLinger(0)
		}
	})
	if got := waitStat(func() int64 { return s.Stats().Connections }, 3); got != 3 {
		t.Fatalf("Connections = %d after the churn, want the 3 kept", got)
	}
	if got := waitStat(func() int64 { return s.Stats().InFlight }, 0); got != 0 {
		t.Fatalf("InFlight = %d after the churn", got)
	}
	if got := waitAtMost(func() int { return openFDs(t) }, fd0, 5*time.Second); got > fd0 {
		t.Fatalf("open fds %d after the churn, %d before", got, fd0)
	}
	// Pool workers may stay idle for a while: allow for them, but not for
	// one per connection.
	if got := waitAtMost(busyGoroutines, g0+20, 5*time.Second); got > g0+20 {
		buf := make([]byte, 1<<16)
		n := runtime.Stack(buf, true)
		t.Fatalf("goroutines %d after the churn, %d before:\n%s", got, g0, buf[:n])
	}
	if p := s.LastPanic(); p != "" {
		t.Fatal(p)
	}
}

// TestTTHeaderUnreadRepliesBounded: a TTHeader client that pipelines
// requests and never reads has its connection closed within the write
// timeout; the server serves others meanwhile and releases everything.
func TestTTHeaderUnreadRepliesBounded(t *testing.T) {
	s, _, addr := startServer(t, server.WithWriteTimeout(300*time.Millisecond))
	dial(t, addr, transport.Framed).call(1, "echo", "warm", nil)
	g0 := busyGoroutines()
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.(*net.TCPConn).SetReadBuffer(4096)
	big := requestBytes(t, transport.TTHeader, 1, strings.Repeat("y", 64<<10))
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 0; i < 400; i++ {
			if _, err := raw.Write(big); err != nil {
				return
			}
		}
	}()
	other := dial(t, addr, transport.TTHeader)
	for i := int32(1); i <= 5; i++ {
		start := time.Now()
		if res, _ := other.call(i, "echo", "other", nil); res.Success.GetMsg() != "other" {
			t.Fatalf("other connection: %+v", res)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("another connection's call took %v", d)
		}
	}
	if got := waitStat(func() int64 { return s.Stats().Connections }, 2); got != 2 {
		t.Fatalf("Connections = %d, want the unread one closed", got)
	}
	raw.Close()
	<-sent
	if got := waitStat(func() int64 { return s.Stats().InFlight }, 0); got != 0 {
		t.Fatalf("InFlight = %d", got)
	}
	if got := waitAtMost(busyGoroutines, g0+20, 5*time.Second); got > g0+20 {
		t.Fatalf("goroutines %d, %d before", got, g0)
	}
}

// serveAsync serves impl with a new server of opts on a loopback port; the
// server's Serve returns into served.
func serveAsync(t *testing.T, impl echotest.Echo, opts ...server.Option) (*server.Server, string, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(opts...)
	if err := s.RegisterService(echotest.EchoServiceInfo, impl); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	return s, ln.Addr().String(), served
}

// blockHandler blocks Echo until release; it keeps the ctx and uses it
// after returning.
type blockHandler struct {
	handler
	entered chan struct{}
	release chan struct{}
	kept    chan context.Context
}

func (h *blockHandler) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	if req.Action == "block" {
		h.entered <- struct{}{}
		<-h.release
	}
	select {
	case h.kept <- ctx:
	default:
	}
	return &echotest.Response{Msg: req.Msg}, nil
}

// TestStopWithBlockedHandler: on every protocol, Stop with a short context
// while a handler blocks reports it, closes the connection, and the
// handler's eventual return neither panics nor leaks.
func TestStopWithBlockedHandler(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			h := &blockHandler{entered: make(chan struct{}, 1), release: make(chan struct{}), kept: make(chan context.Context, 1)}
			s, addr, served := serveAsync(t, h, server.WithExitWaitTime(100*time.Millisecond))
			c := dial(t, addr, p)
			c.call(1, "echo", "first", nil)
			kept := <-h.kept
			if err := c.send("echo", thrift.CALL, 2, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "block"}}, nil); err != nil {
				t.Fatal(err)
			}
			// A second request pipelined behind it.
			if err := c.send("echo", thrift.CALL, 3, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo"}}, nil); err != nil {
				t.Fatal(err)
			}
			<-h.entered
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			err := s.Stop(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "in flight") {
				t.Errorf("Stop = %v, want DeadlineExceeded saying what is in flight", err)
			}
			// The client sees its connection closed (possibly after a
			// shutting-down rejection of the pipelined request).
			for {
				rep, err := c.recv(nil)
				if err != nil {
					break
				}
				if rep.seq == 2 {
					t.Errorf("the blocked call was answered before its handler returned: %+v", rep)
				}
			}
			if kept.Err() == nil {
				t.Error("a kept ctx is not canceled after its handler returned")
			}
			<-kept.Done()
			_ = kept.Value("x")
			close(h.release)
			if err := s.Stop(context.Background()); err != nil {
				t.Errorf("Stop after release: %v", err)
			}
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
			if got := waitStat(func() int64 { return s.Stats().InFlight }, 0); got != 0 {
				t.Errorf("InFlight = %d", got)
			}
			if got := waitStat(func() int64 { return s.Stats().Connections }, 0); got != 0 {
				t.Errorf("Connections = %d", got)
			}
			if p := s.LastPanic(); p != "" {
				t.Errorf("panic: %s", p)
			}
			if st := s.Stats(); st.Panics != 0 {
				t.Errorf("Panics = %d", st.Panics)
			}
		})
	}
}

// TestStopWithUnreadRepliesNoWriteTimeout: with the write timeout off, a
// client that never reads blocks the replies' writer; Stop still ends
// within its exit wait time and releases the goroutines.
func TestStopWithUnreadRepliesNoWriteTimeout(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			s, addr, served := serveAsync(t, &handler{}, server.WithWriteTimeout(0), server.WithExitWaitTime(300*time.Millisecond))
			raw, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			raw.(*net.TCPConn).SetReadBuffer(4096)
			big := requestBytes(t, p, 1, strings.Repeat("y", 64<<10))
			sent := make(chan struct{})
			go func() {
				defer close(sent)
				for i := 0; i < 200; i++ {
					if _, err := raw.Write(big); err != nil {
						return
					}
				}
			}()
			// Wait until the server has stopped reading (its replies are stuck).
			var last int64 = -1
			deadline := time.Now().Add(3 * time.Second)
			for {
				time.Sleep(50 * time.Millisecond)
				n := s.Stats().Requests
				if n == last && n > 0 || time.Now().After(deadline) {
					break
				}
				last = n
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			start := time.Now()
			if err := s.Stop(ctx); err != nil {
				t.Errorf("Stop: %v (after %v)", err, time.Since(start))
			}
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
			raw.Close()
			<-sent
			if got := waitStat(func() int64 { return s.Stats().Connections }, 0); got != 0 {
				t.Errorf("Connections = %d", got)
			}
			if p := s.LastPanic(); p != "" {
				t.Errorf("panic: %s", p)
			}
		})
	}
}

// TestMaxConnectionsUnderChurn: while live connections call, many extra
// connections are refused (some sending a request first); the live ones
// are undisturbed, the counts add up, and once the extra ones leave new
// connections are admitted up to the limit.
func TestMaxConnectionsUnderChurn(t *testing.T) {
	const limit = 4
	s, _, addr := startServer(t, server.WithMaxConnections(limit))
	var live []*testConn
	for i := 0; i < limit; i++ {
		live = append(live, dial(t, addr, protocols[i%len(protocols)]))
		live[i].call(1, "echo", "hi", nil)
	}
	req := requestBytes(t, transport.Framed, 9, "extra")
	const extra = 300
	stop := make(chan struct{})
	liveErr := make(chan error, 1)
	go func() {
		defer close(liveErr)
		for seq := int32(2); ; seq++ {
			select {
			case <-stop:
				return
			default:
			}
			for i, c := range live {
				args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "live"}}
				if err := c.send("echo", thrift.CALL, seq, args, nil); err != nil {
					liveErr <- err
					return
				}
				res := new(echotest.EchoEchoResult)
				if rep, err := c.recv(res); err != nil || res.Success.GetMsg() != "live" {
					liveErr <- errors.New("live connection " + protocols[i%len(protocols)].String() + " disturbed: " + errString(err) + " " + rep.name)
					return
				}
			}
		}
	}()
	// All the extra connections at once.
	churn(t, addr, extra, extra, func(i int, c *net.TCPConn) {
		if i%2 == 0 {
			c.Write(req)
		}
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		if n, err := c.Read(make([]byte, 64)); err == nil {
			t.Errorf("an extra connection read %d bytes", n)
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Error("an extra connection was neither served nor closed")
		}
	})
	close(stop)
	if err := <-liveErr; err != nil {
		t.Fatal(err)
	}
	if got := waitStat(func() int64 { return s.Stats().RejectedConnections }, extra); got != extra {
		t.Fatalf("RejectedConnections = %d, want %d", got, extra)
	}
	if got := s.Stats().Connections; got != limit {
		t.Fatalf("Connections = %d, want %d", got, limit)
	}
	for _, c := range live {
		c.conn.Close()
	}
	if got := waitStat(func() int64 { return s.Stats().Connections }, 0); got != 0 {
		t.Fatalf("Connections = %d after the live ones closed", got)
	}
	for i := 0; i < limit; i++ {
		if res, _ := dial(t, addr, protocols[i%len(protocols)]).call(1, "echo", "new", nil); res.Success.GetMsg() != "new" {
			t.Fatalf("new connection %d: %+v", i, res)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
