package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

func TestEchoEveryProtocol(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := dial(t, addr, p)
			for i := int32(1); i <= 5; i++ {
				msg := strings.Repeat("x", int(i)*300)
				res, rep := c.call(i, "echo", msg, nil)
				if rep.typ != thrift.REPLY || rep.name != "echo" {
					t.Fatalf("reply %v %q (%v)", rep.typ, rep.name, rep.ex)
				}
				if res.Success == nil || res.Success.Msg != msg || res.Success.Action != "echo" {
					t.Fatalf("result %+v", res)
				}
			}
		})
	}
}

func TestCompactPayload(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader} {
		c := dial(t, addr, p)
		h := &transport.Header{PayloadProtocol: transport.PayloadCompact}
		args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "compact"}}
		if err := c.send("echo", thrift.CALL, 9, args, h); err != nil {
			t.Fatal(err)
		}
		r := c.conn.Reader()
		_, typ, seq, body, err := transport.ReadMessage(r, p, 1<<20, &c.hdr)
		if err != nil || typ != thrift.REPLY || seq != 9 || c.hdr.PayloadProtocol != transport.PayloadCompact {
			t.Fatalf("%v: %v %v %d payload %d", p, err, typ, seq, c.hdr.PayloadProtocol)
		}
		res := new(echotest.EchoEchoResult)
		if _, err := res.FastReadCompact(body); err != nil || res.Success.GetMsg() != "compact" {
			t.Fatalf("%v: %v %+v", p, err, res)
		}
		r.Release()
	}
}

func TestHandlerOutcomes(t *testing.T) {
	s, _, addr := startServer(t)
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := dial(t, addr, p)
			_, rep := c.call(1, "panic", "at the disco", nil)
			if rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionInternalError || !strings.Contains(rep.ex.Message, "boom: at the disco") {
				t.Fatalf("panic: %v %v", rep.typ, rep.ex)
			}
			res, rep := c.call(2, "oops", "declared", nil)
			if rep.typ != thrift.REPLY || res.Oops == nil || res.Oops.Why != "declared" || res.Success != nil {
				t.Fatalf("declared exception: %v %+v", rep.typ, res)
			}
			_, rep = c.call(3, "fail", "x", nil)
			if rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionInternalError || !strings.Contains(rep.ex.Message, "plain failure: x") {
				t.Fatalf("error: %v %v", rep.typ, rep.ex)
			}
			res, rep = c.call(4, "biz", "no stock", nil)
			if p == transport.TTHeader {
				if rep.typ != thrift.REPLY || rep.str["biz-status"] != "1001" || rep.str["biz-message"] != "no stock" || rep.str["biz-extra"] != `{"k":"v"}` {
					t.Fatalf("biz status: %v %v", rep.typ, rep.str)
				}
				if res.Success != nil || res.Oops != nil {
					t.Fatalf("biz status with a result: %+v", res)
				}
			} else if rep.typ != thrift.EXCEPTION || !strings.Contains(rep.ex.Message, "business status 1001: no stock") {
				t.Fatalf("biz status: %v %v", rep.typ, rep.ex)
			}
			// The connection still works.
			if res, _ := c.call(5, "echo", "after", nil); res.Success.GetMsg() != "after" {
				t.Fatalf("after errors: %+v", res)
			}
		})
	}
	if got := s.Stats().Panics; got != 3 {
		t.Fatalf("Stats().Panics = %d, want 3", got)
	}
}

// TestHandlerGoexit: a handler that ends its goroutine with runtime.Goexit
// is answered with INTERNAL_ERROR and its call is freed (in-flight count,
// hold of the connection), with a tracer or without. A TTHeader connection
// serves on; a Framed or Buffered one, whose reader the handler ended, is
// closed after the reply.
func TestHandlerGoexit(t *testing.T) {
	for _, traced := range []bool{false, true} {
		var opts []server.Option
		if traced {
			opts = append(opts, server.WithTracer(noopTracer{}))
		}
		s, _, addr := startServer(t, opts...)
		for _, p := range protocols {
			c := dial(t, addr, p)
			c.conn.SetReadTimeout(2 * time.Second)
			_, rep := c.call(1, "goexit", "", nil)
			if rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionInternalError || !strings.Contains(rep.ex.Message, "Goexit") {
				t.Fatalf("traced %v, %v: reply %+v %v, want INTERNAL_ERROR", traced, p, rep, rep.ex)
			}
			if p == transport.TTHeader {
				if res, _ := c.call(2, "echo", "on", nil); res.Success.GetMsg() != "on" {
					t.Fatalf("traced %v, %v: after the Goexit: %+v", traced, p, res)
				}
			} else if _, err := c.recv(nil); err == nil {
				t.Fatalf("traced %v, %v: the connection is still read after its reader ended", traced, p)
			}
			if n := s.Stats().InFlight; n != 0 {
				t.Fatalf("traced %v, %v: %d requests in flight after the replies", traced, p, n)
			}
		}
	}
}

func TestUnknownMethodAndBadArgs(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range protocols {
		c := dial(t, addr, p)
		if err := c.send("nope", thrift.CALL, 7, &echotest.EchoEchoArgs{}, nil); err != nil {
			t.Fatal(err)
		}
		rep, err := c.recv(nil)
		if err != nil || rep.typ != thrift.EXCEPTION || rep.seq != 7 || rep.ex.Type != thrift.ExceptionUnknownMethod || !strings.Contains(rep.ex.Message, `"nope"`) {
			t.Fatalf("%v: %v %+v %v", p, err, rep, rep.ex)
		}
		// A truncated argument struct is a protocol error (Buffered has no
		// frame: there the rest of the struct is awaited).
		if p == transport.Buffered {
			continue
		}
		if err := c.send("echo", thrift.CALL, 8, badArgs{}, nil); err != nil {
			t.Fatal(err)
		}
		if rep, err = c.recv(nil); err != nil || rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionProtocolError {
			t.Fatalf("%v: bad args: %v %+v %v", p, err, rep, rep.ex)
		}
		if res, _ := c.call(9, "echo", "still here", nil); res.Success.GetMsg() != "still here" {
			t.Fatalf("%v: after errors: %+v", p, res)
		}
	}
}

// badArgs is a struct whose field 1 claims a struct and ends early.
type badArgs struct{}

func (badArgs) BLength() int { return 4 }
func (badArgs) FastWrite(b []byte) int {
	b[0], b[1], b[2], b[3] = byte(thrift.STRUCT), 0, 1, byte(thrift.STRING)
	return 4
}
func (badArgs) FastRead(b []byte) (int, error) { return 0, errors.New("unused") }

func TestMultiplexedName(t *testing.T) {
	_, _, addr := startServer(t)
	c := dial(t, addr, transport.Framed)
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "mux"}}
	if err := c.send("Echo:echo", thrift.CALL, 1, args, nil); err != nil {
		t.Fatal(err)
	}
	res := new(echotest.EchoEchoResult)
	if rep, err := c.recv(res); err != nil || rep.typ != thrift.REPLY || rep.name != "echo" || res.Success.GetMsg() != "mux" {
		t.Fatalf("%v %+v %+v", err, rep, res)
	}
}

func TestOneway(t *testing.T) {
	_, h, addr := startServer(t)
	for _, p := range protocols {
		c := dial(t, addr, p)
		if err := c.send("notify", thrift.ONEWAY, 1, &echotest.EchoNotifyArgs{Msg: "hi " + p.String()}, nil); err != nil {
			t.Fatal(err)
		}
		if m := waitNotified(t, h); m != "hi "+p.String() {
			t.Fatalf("notified %q", m)
		}
		// No reply was sent for it: the next reply is the next call's.
		if _, rep := c.call(2, "echo", "x", nil); rep.seq != 2 {
			t.Fatalf("seq %d", rep.seq)
		}
	}
}

func waitNotified(t *testing.T, h *handler) string {
	t.Helper()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case m := <-h.notified:
		return m
	case <-timer.C:
		t.Fatal("oneway request not served")
	}
	return ""
}

func TestTTHeaderInfoAndDeadline(t *testing.T) {
	_, _, addr := startServer(t)
	c := dial(t, addr, transport.TTHeader)
	h := &transport.Header{}
	h.SetInt(transport.KeyFromService, "caller-svc")
	h.SetInt(transport.KeyToService, "Echo")
	h.SetStr("RPC_TRANSIT_tenant", "blue")
	h.SetStr("RPC_PERSIST_trace", "t-1")
	res, _ := c.call(41, "info", "", h)
	if got, want := res.Success.GetMsg(), "caller-svc Echo echo ttheader 41 blue t-1"; got != want {
		t.Fatalf("info %q, want %q", got, want)
	}

	h = &transport.Header{}
	h.SetInt(transport.KeyRPCTimeout, ms(50*time.Millisecond))
	start := time.Now()
	res, _ = c.call(42, "deadline", "", h)
	if got := res.Success.GetMsg(); got != "true context deadline exceeded" {
		t.Fatalf("deadline: %q", got)
	}
	if d := time.Since(start); d < 40*time.Millisecond || d > 2*time.Second {
		t.Fatalf("the deadline fired after %v, want about 50ms", d)
	}
	if res, _ = c.call(43, "deadline", "", nil); res.Success.GetMsg() != "none" {
		t.Fatalf("deadline without a timeout: %q", res.Success.GetMsg())
	}
}

// deadlineReporter answers with what its context says of the deadline.
type deadlineReporter struct{}

func (deadlineReporter) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	dl, ok := ctx.Deadline()
	return &echotest.Response{Msg: fmt.Sprintf("%v %d %v", ok, dl.Year(), ctx.Err())}, nil
}
func (deadlineReporter) Notify(ctx context.Context, msg string) error { return nil }

// TestRPCTimeoutBeyondInt64: an RPC timeout whose nanoseconds overflow
// int64 (as a Duration, or added to the clock) gives the handler the
// farthest deadline there is, not one in the past.
func TestRPCTimeoutBeyondInt64(t *testing.T) {
	_, addr := startWith(t, server.New(), deadlineReporter{})
	c := dial(t, addr, transport.TTHeader)
	for i, v := range []string{"9000000000000", "9223372036854775", "9223372036854775807"} {
		h := &transport.Header{}
		h.SetInt(transport.KeyRPCTimeout, v)
		res, _ := c.call(int32(i), "x", "", h)
		if got := res.Success.GetMsg(); got != "true 2262 <nil>" {
			t.Errorf("timeout %s ms: the handler's deadline and error: %q, want %q", v, got, "true 2262 <nil>")
		}
	}
}

// TestNonCallMessage: a REPLY or EXCEPTION sent to the server is answered
// with INVALID_MESSAGE_TYPE under the name it was sent with.
func TestNonCallMessage(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range protocols {
		c := dial(t, addr, p)
		for i, typ := range []thrift.MessageType{thrift.REPLY, thrift.EXCEPTION} {
			if err := c.send("echo", typ, int32(i), &echotest.EchoEchoArgs{}, nil); err != nil {
				t.Fatal(err)
			}
			rep, err := c.recv(nil)
			if err != nil || rep.typ != thrift.EXCEPTION || rep.seq != int32(i) || rep.name != "echo" || rep.ex.Type != thrift.ExceptionInvalidMessageType {
				t.Fatalf("%v %v: %v %+v %v", p, typ, err, rep, rep.ex)
			}
		}
	}
}

func TestMiddleware(t *testing.T) {
	var mu sync.Mutex
	var trace []string
	mw := func(name string) endpoint.Middleware {
		return func(next endpoint.Endpoint) endpoint.Endpoint {
			return func(ctx context.Context, req, resp any) error {
				ri := rpcinfo.FromContext(ctx)
				mu.Lock()
				trace = append(trace, fmt.Sprintf("%s>%s.%s", name, ri.Callee, ri.Method))
				mu.Unlock()
				err := next(ctx, req, resp)
				mu.Lock()
				trace = append(trace, fmt.Sprintf("<%s %T", name, resp))
				mu.Unlock()
				return err
			}
		}
	}
	_, _, addr := startServer(t, server.WithMiddleware(mw("a")), server.WithMiddleware(mw("b")))
	c := dial(t, addr, transport.Framed)
	c.call(1, "echo", "x", nil)
	mu.Lock()
	defer mu.Unlock()
	if got, want := strings.Join(trace, " "), "a>Echo.echo b>Echo.echo <b *echotest.EchoEchoResult <a *echotest.EchoEchoResult"; got != want {
		t.Fatalf("trace %q, want %q", got, want)
	}
}

// TestPipelinedTTHeader sends many requests before reading: they are served
// concurrently (replies out of order) and every one is answered.
func TestPipelinedTTHeader(t *testing.T) {
	_, _, addr := startServer(t)
	c := dial(t, addr, transport.TTHeader)
	const n = 100
	for i := int32(0); i < n; i++ {
		// Early requests sleep longest.
		args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: fmt.Sprintf("%dms", (n-i)/5)}}
		if err := c.send("echo", thrift.CALL, i, args, nil); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[int32]bool{}
	var order []int32
	for len(seen) < n {
		res := new(echotest.EchoEchoResult)
		rep, err := c.recv(res)
		if err != nil || rep.typ != thrift.REPLY || res.Success == nil {
			t.Fatalf("after %d replies: %v %+v", len(seen), err, rep)
		}
		if seen[rep.seq] {
			t.Fatalf("seq %d answered twice", rep.seq)
		}
		seen[rep.seq] = true
		order = append(order, rep.seq)
	}
	if order[0] == 0 {
		t.Fatalf("replies came in order: the requests were not served concurrently")
	}
}

// TestPipelinedFramedInOrder: Framed replies keep the requests' order.
func TestPipelinedFramedInOrder(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		c := dial(t, addr, p)
		const n = 40
		for i := int32(0); i < n; i++ {
			args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: fmt.Sprintf("%dms", (n-i)/10)}}
			if err := c.send("echo", thrift.CALL, i, args, nil); err != nil {
				t.Fatal(err)
			}
		}
		for i := int32(0); i < n; i++ {
			rep, err := c.recv(new(echotest.EchoEchoResult))
			if err != nil || rep.seq != i {
				t.Fatalf("%v: reply %d: %v seq %d", p, i, err, rep.seq)
			}
		}
	}
}

// TestReplyNotHeldForNextRequest: a Framed or Buffered client that sends a
// request and the first bytes of the next one in one write gets the first
// reply while the server waits for the rest of the second request (a client
// that waits for it before sending the rest would otherwise deadlock).
func TestReplyNotHeldForNextRequest(t *testing.T) {
	_, _, addr := startServer(t)
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		c := dial(t, addr, p)
		w := c.conn.Writer()
		a := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "A"}}
		if err := transport.WriteMessage(w, p, nil, "echo", thrift.CALL, 1, a); err != nil {
			t.Fatal(err)
		}
		b := requestBytes(t, p, 2, "B")
		w.WriteBinary(b[:len(b)/2])
		w.Flush()
		c.conn.SetReadTimeout(time.Second)
		res := new(echotest.EchoEchoResult)
		if rep, err := c.recv(res); err != nil || rep.seq != 1 || res.Success.GetMsg() != "A" {
			t.Fatalf("%v: the reply to the first request while the second is incomplete: %v %+v", p, err, rep)
		}
		// The rest of the second request is read on as usual.
		w.WriteBinary(b[len(b)/2:])
		w.Flush()
		if rep, err := c.recv(res); err != nil || rep.seq != 2 || res.Success.GetMsg() != "B" {
			t.Fatalf("%v: the reply to the second request: %v %+v", p, err, rep)
		}
	}
}

// requestBytes returns an echo request of protocol p as it goes on the wire.
func requestBytes(t *testing.T, p transport.Protocol, seq int32, msg string) []byte {
	lb := buf.NewLinkBuffer()
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: msg}}
	if err := transport.WriteMessage(lb, p, &transport.Header{Protocol: p}, "echo", thrift.CALL, seq, args); err != nil {
		t.Fatal(err)
	}
	lb.Flush()
	return lb.Bytes()
}

func TestMaxMessageSize(t *testing.T) {
	s, h, addr := startServer(t, server.WithMaxMessageSize(4096))
	c := dial(t, addr, transport.Framed)
	if _, rep := c.call(1, "echo", strings.Repeat("a", 3000), nil); rep.typ != thrift.REPLY {
		t.Fatalf("a message under the limit: %+v", rep)
	}
	// A frame declaring 1 GiB: the connection is closed without the server
	// waiting for (or allocating) the body.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	hdr := binary.BigEndian.AppendUint32(nil, 1<<30)
	hdr = append(hdr, 0x80, 0x01, 0x00, 0x01)
	raw.Write(hdr)
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := raw.Read(make([]byte, 16)); err == nil {
		t.Fatalf("read %d bytes, want the connection closed", n)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server waited for the body of an oversized frame")
	}
	before := h.calls.Load()
	// A message just over the limit on a fresh connection is refused too,
	// with an exception saying why, and the connection closed.
	c2 := dial(t, addr, transport.Framed)
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: strings.Repeat("b", 5000)}}
	if err := c2.send("echo", thrift.CALL, 1, args, nil); err != nil {
		t.Fatal(err)
	}
	if rep, err := c2.recv(nil); err != nil || rep.typ != thrift.EXCEPTION || !strings.Contains(rep.ex.Message, "exceeds the limit of 4096") {
		t.Fatalf("an oversized message: %+v, %v; want an exception naming the limit", rep, err)
	}
	if _, err := c2.recv(nil); err == nil {
		t.Fatal("an oversized message was served")
	}
	if h.calls.Load() != before {
		t.Fatal("the handler ran for an oversized message")
	}
	_ = s
}

func TestMaxConnections(t *testing.T) {
	s, _, addr := startServer(t, server.WithMaxConnections(2))
	a, b := dial(t, addr, transport.Framed), dial(t, addr, transport.TTHeader)
	a.call(1, "echo", "a", nil)
	b.call(1, "echo", "b", nil)
	third := dial(t, addr, transport.Framed)
	third.send("echo", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo"}}, nil)
	if _, err := third.recv(nil); err == nil {
		t.Fatal("a connection over the limit was served")
	}
	if got := s.Stats().RejectedConnections; got != 1 {
		t.Fatalf("RejectedConnections = %d, want 1", got)
	}
	// Closing one makes room.
	a.conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Connections > 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	d := dial(t, addr, transport.Framed)
	if res, _ := d.call(1, "echo", "d", nil); res.Success.GetMsg() != "d" {
		t.Fatalf("after a close: %+v", res)
	}
}

func TestMaxQPS(t *testing.T) {
	s, _, addr := startServer(t, server.WithMaxQPS(10))
	c := dial(t, addr, transport.TTHeader)
	ok, rejected := 0, 0
	for i := int32(0); i < 30; i++ {
		_, rep := c.call(i, "echo", "x", nil)
		switch {
		case rep.typ == thrift.REPLY:
			ok++
		case rep.ex != nil && strings.Contains(rep.ex.Message, "overloaded") && strings.Contains(rep.ex.Message, "10 requests per second"):
			rejected++
		default:
			t.Fatalf("reply %+v %v", rep, rep.ex)
		}
	}
	// A burst of 10, plus what refills while the 30 calls run.
	if ok < 10 || ok > 15 || rejected < 15 {
		t.Fatalf("%d served, %d rejected; want about 10 and 20", ok, rejected)
	}
	if got := s.Stats().RejectedQPS; got != int64(rejected) {
		t.Fatalf("RejectedQPS = %d, want %d", got, rejected)
	}
	time.Sleep(200 * time.Millisecond) // two tokens
	if _, rep := c.call(99, "echo", "x", nil); rep.typ != thrift.REPLY {
		t.Fatalf("after a pause: %v", rep.ex)
	}
}

func TestRegisterServiceErrors(t *testing.T) {
	s := server.New()
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err == nil {
		t.Fatal("a service registered twice")
	}
	noHandler := &thrift.ServiceInfo{Name: "X", Methods: []thrift.MethodInfo{{Name: "m", NewArgs: echotest.EchoServiceInfo.Methods[0].NewArgs}}}
	if err := s.RegisterService(noHandler, &handler{}); err == nil || !strings.Contains(err.Error(), "no Handler") {
		t.Fatalf("a method without Handler: %v", err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); !errors.Is(err, server.ErrServerStopped) {
		t.Fatalf("Run after Stop: %v", err)
	}
	if err := server.New(server.WithMaxQPS(-1)).Run(); err == nil {
		t.Fatal("a negative option was accepted")
	}
}

// serveEchoAndEcho2 serves two services with the same methods, Echo (first)
// and Echo2, whose handlers answer "from Echo" and "from Echo2", and returns
// the address.
func serveEchoAndEcho2(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New()
	second := *echotest.EchoServiceInfo
	second.Name = "Echo2"
	if err := s.RegisterService(&second, &fixedHandler{resp: &echotest.Response{Msg: "from Echo2"}}); err != nil {
		t.Fatal(err)
	}
	serve(t, s, ln, &fixedHandler{resp: &echotest.Response{Msg: "from Echo"}})
	return ln.Addr().String()
}

// TestSeveralServices: two services with the same method names on one
// server; the TTHeader callee name or a multiplexed name chooses, and other
// requests go to the service registered first.
func TestSeveralServices(t *testing.T) {
	addr := serveEchoAndEcho2(t)

	c := dial(t, addr, transport.TTHeader)
	h := &transport.Header{}
	h.SetInt(transport.KeyToService, "Echo")
	if res, _ := c.call(1, "echo", "", h); res.Success.GetMsg() != "from Echo" {
		t.Fatalf("callee Echo: %q", res.Success.GetMsg())
	}
	h = &transport.Header{}
	h.SetInt(transport.KeyToService, "Echo2")
	if res, _ := c.call(2, "echo", "", h); res.Success.GetMsg() != "from Echo2" {
		t.Fatalf("callee Echo2: %q", res.Success.GetMsg())
	}
	f := dial(t, addr, transport.Framed)
	if res, _ := f.call(3, "echo", "", nil); res.Success.GetMsg() != "from Echo2" {
		t.Fatalf("no callee: %q, want the first registered", res.Success.GetMsg())
	}
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{}}
	if err := f.send("Echo:echo", thrift.CALL, 4, args, nil); err != nil {
		t.Fatal(err)
	}
	res := new(echotest.EchoEchoResult)
	if _, err := f.recv(res); err != nil || res.Success.GetMsg() != "from Echo" {
		t.Fatalf("multiplexed Echo:echo: %v %q", err, res.Success.GetMsg())
	}
}

// TestPipelineBounded: a client pipelining far more TTHeader requests than
// the per-connection bound gets every answer, while the server serves at
// most about the bound at once.
func TestPipelineBounded(t *testing.T) {
	s, _, addr := startServer(t)
	c := dial(t, addr, transport.TTHeader)
	const n = 3000
	sendErr := make(chan error, 1)
	go func() {
		args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "20ms"}}
		for i := int32(0); i < n; i++ {
			if err := c.send("echo", thrift.CALL, i, args, nil); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- nil
	}()
	var most int64
	for i := 0; i < n; i++ {
		if f := s.Stats().InFlight; f > most {
			most = f
		}
		if rep, err := c.recv(nil); err != nil || rep.typ != thrift.REPLY {
			t.Fatalf("reply %d: %v %+v", i, err, rep)
		}
	}
	if err := <-sendErr; err != nil {
		t.Fatal(err)
	}
	if most > 1024+1 {
		t.Fatalf("%d requests in flight at once, want at most 1025", most)
	}
	t.Logf("at most %d in flight", most)
}

// TestServeClosesListenerOnError: Serve closes its listener whenever it
// returns, as its doc says, also when it refuses to start, so the port is
// free for another try; Run closes the WithListener listener likewise.
func TestServeClosesListenerOnError(t *testing.T) {
	cases := []struct {
		name string
		run  func(ln net.Listener) error
	}{
		{"no service", func(ln net.Listener) error { return server.New().Serve(ln) }},
		{"bad option", func(ln net.Listener) error {
			s := server.New(server.WithMaxQPS(-1))
			if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
				t.Fatal(err)
			}
			return s.Serve(ln)
		}},
		{"Run with a bad option", func(ln net.Listener) error {
			s := server.New(server.WithListener(ln), server.WithMaxQPS(-1))
			if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
				t.Fatal(err)
			}
			return s.Run()
		}},
		{"Run after Stop", func(ln net.Listener) error {
			s := server.New(server.WithListener(ln))
			if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			return s.Run()
		}},
	}
	for _, tc := range cases {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.run(ln); err == nil {
			t.Fatalf("%s: Serve succeeded", tc.name)
		}
		if err := ln.Close(); err == nil {
			t.Errorf("%s: the listener is still open after Serve returned", tc.name)
		}
	}
}

// TestIDLServiceNameChooses: a Kitex client of a server with several
// services names the IDL service in the string key "isn" and puts its own
// name for the callee (a PSM) in ToService; "isn" chooses between services
// that have a method of the same name.
func TestIDLServiceNameChooses(t *testing.T) {
	c := dial(t, serveEchoAndEcho2(t), transport.TTHeader)
	for i, svc := range []string{"Echo", "Echo2"} {
		h := &transport.Header{}
		h.SetInt(transport.KeyToService, "demo.echo.server")
		h.SetStr(transport.StrKeyIDLService, svc)
		if res, rep := c.call(int32(i), "echo", "", h); rep.ex != nil || res.Success.GetMsg() != "from "+svc {
			t.Errorf("isn %s: %q %v", svc, res.Success.GetMsg(), rep.ex)
		}
	}
}

// TestUnknownServiceSaysSo: a multiplexed name whose service is not
// registered is answered with an UNKNOWN_METHOD exception that names the
// unknown service, not the method (which another service may have).
func TestUnknownServiceSaysSo(t *testing.T) {
	_, _, addr := startServer(t)
	c := dial(t, addr, transport.Framed)
	cases := []struct{ name, want string }{
		{"Nope:echo", `unknown service "Nope"`},
		{"Echo:nope", `service "Echo" has no method "nope"`},
	}
	for i, tc := range cases {
		if err := c.send(tc.name, thrift.CALL, int32(i), &echotest.EchoEchoArgs{}, nil); err != nil {
			t.Fatal(err)
		}
		rep, err := c.recv(nil)
		if err != nil || rep.ex == nil || rep.ex.Type != thrift.ExceptionUnknownMethod || !strings.Contains(rep.ex.Message, tc.want) {
			t.Errorf("%s: %v %+v, want UNKNOWN_METHOD with %q", tc.name, err, rep.ex, tc.want)
		}
	}
}
