package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestStopLosesNothing is the graceful-stop acceptance test: 1,000 requests
// in flight on 50 connections (TTHeader, Framed and Buffered) while Stop is
// called, and 100 more sent after Stop began. Every request gets its reply or
// a shutting-down rejection: none is dropped and no connection is reset.
func TestStopLosesNothing(t *testing.T) {
	s, _, addr := startServer(t)
	const conns, perConn, late = 50, 20, 2
	var sent sync.WaitGroup
	var served, rejected, dropFlags atomic.Int64
	errs := make(chan error, conns)
	stopping := make(chan struct{})
	var readers sync.WaitGroup
	sent.Add(conns)
	for i := 0; i < conns; i++ {
		p := protocols[i%len(protocols)]
		c := dial(t, addr, p)
		readers.Add(1)
		go func() {
			defer readers.Done()
			want := map[int32]string{}
			send := func(seq int32) error {
				// Framed/Buffered requests are served one after another: keep
				// them short so the drain ends well inside the test.
				d := "5ms"
				if p == transport.TTHeader {
					d = "30ms"
				}
				args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: d}}
				want[seq] = d // the sleep handler echoes it
				return c.send("echo", thrift.CALL, seq, args, nil)
			}
			for seq := int32(0); seq < perConn; seq++ {
				if err := send(seq); err != nil {
					sent.Done()
					errs <- err
					return
				}
			}
			sent.Done()
			<-stopping
			for seq := int32(perConn); seq < perConn+late; seq++ {
				if err := send(seq); err != nil {
					errs <- fmt.Errorf("%v: sending during the drain: %w", p, err)
					return
				}
			}
			for len(want) > 0 {
				res := new(echotest.EchoEchoResult)
				rep, err := c.recv(res)
				if err != nil {
					errs <- fmt.Errorf("%v: %d replies missing: %w", p, len(want), err)
					return
				}
				msg, ok := want[rep.seq]
				if !ok {
					errs <- fmt.Errorf("%v: unexpected seq %d", p, rep.seq)
					return
				}
				delete(want, rep.seq)
				if _, ok := rep.str[transport.StrKeyConnReset]; ok {
					dropFlags.Add(1)
				}
				switch {
				case rep.typ == thrift.REPLY && res.Success.GetMsg() == msg:
					served.Add(1)
				case rep.typ == thrift.EXCEPTION:
					if code, _ := rpcerr.CodeFromMessage(rep.ex.Message); code != rpcerr.ShuttingDown {
						errs <- fmt.Errorf("%v: seq %d: exception %v", p, rep.seq, rep.ex)
						return
					}
					rejected.Add(1)
				default:
					errs <- fmt.Errorf("%v: seq %d: reply %+v", p, rep.seq, res)
					return
				}
			}
			errs <- nil
		}()
	}
	sent.Wait()
	stopDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopDone <- s.Stop(ctx)
	}()
	// Let Stop begin before the late requests go out.
	for s.Stats().RejectedShuttingDown == 0 && len(stopDone) == 0 {
		if !stopStarted(s) {
			time.Sleep(time.Millisecond)
			continue
		}
		break
	}
	close(stopping)
	for i := 0; i < conns; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	readers.Wait()
	if err := <-stopDone; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	total := served.Load() + rejected.Load()
	t.Logf("served %d, rejected as shutting down %d, TTHeader replies with crrst %d", served.Load(), rejected.Load(), dropFlags.Load())
	if total != conns*(perConn+late) {
		t.Fatalf("%d answers, want %d", total, conns*(perConn+late))
	}
	// Requests read before Stop are served; those still unread (queued
	// behind in-order Framed/Buffered requests, or sent late) may be
	// rejected.
	if served.Load() == 0 {
		t.Fatal("nothing was served")
	}
	if rejected.Load() == 0 || dropFlags.Load() == 0 {
		t.Fatal("no request was rejected or no TTHeader reply carried crrst: the drain was not exercised")
	}
	if got := s.Stats().Connections; got != 0 {
		t.Fatalf("%d connections open after Stop", got)
	}
}

func stopStarted(s interface{ Draining() bool }) bool { return s.Draining() }

// TestStopBounded: a handler that outlives the exit wait time does not hold
// Stop past ctx; its connection is closed at the exit wait limit.
func TestStopBounded(t *testing.T) {
	s, _, addr := startServer(t, server.WithExitWaitTime(100*time.Millisecond))
	c := dial(t, addr, transport.TTHeader)
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "600ms"}}
	if err := c.send("echo", thrift.CALL, 1, args, nil); err != nil {
		t.Fatal(err)
	}
	for s.Stats().InFlight == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Stop(ctx)
	if d := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || d > time.Second {
		t.Fatalf("Stop = %v after %v, want the deadline after about 300ms", err, d)
	}
	if _, err := c.recv(nil); err == nil {
		t.Fatal("the connection of the stuck handler is still open")
	}
	time.Sleep(400 * time.Millisecond) // let the handler end before the leak check
}

func TestIdleTimeout(t *testing.T) {
	_, _, addr := startServer(t, server.WithIdleTimeout(100*time.Millisecond))
	c := dial(t, addr, transport.Framed)
	c.call(1, "echo", "x", nil)
	start := time.Now()
	if _, err := c.recv(nil); err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("idle connection: %v after %v, want closed after about 100ms", err, time.Since(start))
	}
}

// TestIdleTimeoutPartialRequest: a client that sends the first bytes of a
// request and falls silent idles out like one that sends nothing.
func TestIdleTimeoutPartialRequest(t *testing.T) {
	_, _, addr := startServer(t, server.WithIdleTimeout(100*time.Millisecond))
	for _, p := range protocols {
		raw, _ := halfRequest(t, addr, p)
		raw.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := raw.Read(make([]byte, 256))
		raw.Close()
		if ne, ok := err.(net.Error); err == nil || ok && ne.Timeout() {
			t.Fatalf("%v: half a request, then silence for 2s with a 100ms idle timeout: read %d bytes, %v; want the connection closed", p, n, err)
		}
	}
}

// TestIdleTimeoutSparesSlowCalls: a call whose handler runs longer than
// the idle timeout, the client sending nothing meanwhile, gets its reply:
// the connection is not idle while it owes one (a TTHeader call runs on
// its own goroutine, holding the connection).
func TestIdleTimeoutSparesSlowCalls(t *testing.T) {
	_, _, addr := startServer(t, server.WithIdleTimeout(100*time.Millisecond))
	for _, p := range protocols {
		c := dial(t, addr, p)
		if _, rep := c.call(1, "sleep", "500ms", nil); rep.typ != thrift.REPLY {
			t.Fatalf("%v: a 500ms call with a 100ms idle timeout: %+v", p, rep)
		}
	}
}

// TestReadTimeoutBoundsWholeRequest: with WithReadTimeout, a request whose
// bytes keep trickling in, each well within the timeout of the last, is cut
// off once the timeout has passed since the server began waiting for it.
func TestReadTimeoutBoundsWholeRequest(t *testing.T) {
	_, _, addr := startServer(t, server.WithReadTimeout(200*time.Millisecond))
	for _, p := range protocols {
		raw, b := halfRequest(t, addr, p)
		// The rest, a byte every 50ms: about a second for the whole.
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for _, x := range b[len(b)/2:] {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if _, err := raw.Write([]byte{x}); err != nil {
					return
				}
			}
		}()
		raw.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, err := raw.Read(make([]byte, 256))
		close(stop)
		<-done
		raw.Close()
		if ne, ok := err.(net.Error); err == nil || ok && ne.Timeout() {
			t.Fatalf("%v: a request trickling in for %d x 50ms with a 200ms read timeout: read %d bytes, %v; want the connection closed", p, len(b)-len(b)/2, n, err)
		}
	}
}

// TestReadTimeoutSparesIdleConnections: the read timeout bounds reading a
// request, not the wait for the next one.
func TestReadTimeoutSparesIdleConnections(t *testing.T) {
	_, _, addr := startServer(t, server.WithReadTimeout(50*time.Millisecond))
	for _, p := range protocols {
		c := dial(t, addr, p)
		c.call(1, "echo", "x", nil)
		time.Sleep(200 * time.Millisecond)
		if res, _ := c.call(2, "echo", "y", nil); res.Success.GetMsg() != "y" {
			t.Fatalf("%v: after an idle while: %+v", p, res)
		}
	}
}

// TestReadTimeoutDefault: without WithReadTimeout a request must still
// arrive whole in DefaultReadTimeout; WithReadTimeout(0) turns that off.
func TestReadTimeoutDefault(t *testing.T) {
	if got := server.New().ReadTimeout(); got != server.DefaultReadTimeout || got <= 0 || got > 10*time.Second {
		t.Fatalf("default read timeout %v, want DefaultReadTimeout (%v), a few seconds", got, server.DefaultReadTimeout)
	}
	if got := server.New(server.WithReadTimeout(0)).ReadTimeout(); got != 0 {
		t.Fatalf("WithReadTimeout(0): read timeout %v, want none", got)
	}
}

// halfRequest dials addr and sends the first half of a request in protocol
// p; it returns the connection and the whole request.
func halfRequest(t *testing.T, addr string, p transport.Protocol) (net.Conn, []byte) {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	b := requestBytes(t, p, 1, "x")
	raw.Write(b[:len(b)/2])
	return raw, b
}

// TestStopTwice: a second Stop while the first drains (a signal handler
// and a deferred Stop, say) returns, like the first, only once Serve has
// returned, or with its own context's error when that ends first.
func TestStopTwice(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New()
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	c := dial(t, ln.Addr().String(), transport.TTHeader)
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "300ms"}}
	if err := c.send("echo", thrift.CALL, 1, args, nil); err != nil {
		t.Fatal(err)
	}
	for s.Stats().InFlight == 0 {
		time.Sleep(time.Millisecond)
	}
	first := make(chan error, 1)
	go func() { first <- s.Stop(context.Background()) }()
	for !s.Draining() {
		time.Sleep(time.Millisecond)
	}
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Stop(expired); !errors.Is(err, context.Canceled) {
		t.Errorf("a second Stop with an ended context while the first drains = %v, want context.Canceled", err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	default:
		t.Error("a second Stop returned before Serve returned")
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	if err := <-first; err != nil {
		t.Errorf("first Stop: %v", err)
	}
	if res, rep := c.recvEcho(t); rep.ex != nil || res.Success == nil {
		t.Errorf("the request in flight at Stop: %+v %+v", res, rep)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("Stop after Stop returned: %v", err)
	}
}

func (c *testConn) recvEcho(t *testing.T) (*echotest.EchoEchoResult, reply) {
	t.Helper()
	res := new(echotest.EchoEchoResult)
	rep, err := c.recv(res)
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	return res, rep
}
