package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// handler implements echotest.Echo; Request.Action chooses the behaviour.
type handler struct {
	notified chan string
	calls    atomic.Int64
}

func (h *handler) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	h.calls.Add(1)
	switch req.Action {
	case "echo":
		return &echotest.Response{Action: req.Action, Msg: req.Msg}, nil
	case "panic":
		panic("boom: " + req.Msg)
	case "goexit":
		runtime.Goexit()
	case "oops":
		return nil, &echotest.Oops{Why: req.Msg}
	case "biz":
		return nil, rpcerr.NewBizStatusError(1001, req.Msg).SetExtra("k", "v")
	case "fail":
		return nil, errors.New("plain failure: " + req.Msg)
	case "ctxerr":
		return nil, fmt.Errorf("querying the store: %w", context.DeadlineExceeded)
	case "sleep":
		d, _ := time.ParseDuration(req.Msg)
		time.Sleep(d)
		return &echotest.Response{Action: req.Action, Msg: req.Msg}, nil
	case "deadline":
		dl, ok := ctx.Deadline()
		if !ok {
			return &echotest.Response{Msg: "none"}, nil
		}
		<-ctx.Done()
		return &echotest.Response{Msg: fmt.Sprintf("%v %v", time.Until(dl) < time.Second, ctx.Err())}, nil
	case "info":
		ri := rpcinfo.FromContext(ctx)
		tv, _ := metainfo.GetValue(ctx, "tenant")
		pv, _ := metainfo.GetPersistentValue(ctx, "trace")
		return &echotest.Response{Msg: fmt.Sprintf("%s %s %s %s %d %s %s", ri.Caller, ri.Callee, ri.Method, ri.Protocol, ri.SeqID, tv, pv)}, nil
	}
	return nil, errors.New("unknown action " + req.Action)
}

func (h *handler) Notify(ctx context.Context, msg string) error {
	if h.notified != nil {
		h.notified <- msg
	}
	return nil
}

// startServer serves a new handler on a loopback port and stops the server
// when the test ends.
func startServer(t testing.TB, opts ...server.Option) (*server.Server, *handler, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(append(opts, server.WithListener(ln))...)
	h := &handler{notified: make(chan string, 16)}
	serve(t, s, ln, h)
	return s, h, ln.Addr().String()
}

// startWith serves impl with s on a loopback port.
func startWith(t testing.TB, s *server.Server, impl echotest.Echo) (*server.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, s, ln, impl)
	return s, ln.Addr().String()
}

func serve(t testing.TB, s *server.Server, ln net.Listener, impl echotest.Echo) {
	if err := s.RegisterService(echotest.EchoServiceInfo, impl); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// serveInfo serves info (a hand-made ServiceInfo, with no handler value) on
// s over a loopback listener. It returns the address and stop, which stops
// s within timeout and fails t if Stop or Serve returns an error.
func serveInfo(t testing.TB, s *server.Server, info *thrift.ServiceInfo) (addr string, stop func(timeout time.Duration)) {
	t.Helper()
	if err := s.RegisterService(info, struct{}{}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	return ln.Addr().String(), func(timeout time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

// serviceInfo makes a hand-made ServiceInfo, for serveInfo, named name with
// the given methods.
func serviceInfo(name string, methods ...thrift.MethodInfo) *thrift.ServiceInfo {
	return &thrift.ServiceInfo{Name: name, Methods: methods}
}

// method makes a method named name of a hand-made service. newArgs and
// newResult make its codecs; nil stands for echotest's EchoEchoArgs and
// EchoEchoResult. Its handler calls handle with them; a nil handle
// returns nil.
func method(name string, newArgs, newResult func() thrift.FastCodec, handle func(args, result thrift.FastCodec) error) thrift.MethodInfo {
	if newArgs == nil {
		newArgs = func() thrift.FastCodec { return echotest.NewEchoEchoArgs() }
	}
	if newResult == nil {
		newResult = func() thrift.FastCodec { return echotest.NewEchoEchoResult() }
	}
	if handle == nil {
		handle = func(args, result thrift.FastCodec) error { return nil }
	}
	return thrift.MethodInfo{
		Name:      name,
		NewArgs:   newArgs,
		NewResult: newResult,
		Handler: func(ctx context.Context, handler any, args, result thrift.FastCodec) error {
			return handle(args, result)
		},
	}
}

// testConn is a minimal client over one connection: it writes requests and
// reads replies with the transport package.
type testConn struct {
	t     testing.TB
	conn  netpoll.Connection
	proto transport.Protocol
	hdr   transport.Header
}

func dial(t testing.TB, addr string, p transport.Protocol) *testConn {
	t.Helper()
	conn, err := netpoll.DialConnection("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadTimeout(5 * time.Second)
	t.Cleanup(func() { conn.Close() })
	return &testConn{t: t, conn: conn, proto: p}
}

// send writes one request; h may be nil.
func (c *testConn) send(name string, typ thrift.MessageType, seq int32, args thrift.FastCodec, h *transport.Header) error {
	if h == nil {
		h = &transport.Header{}
	}
	h.Protocol = c.proto
	if err := transport.WriteMessage(c.conn.Writer(), c.proto, h, name, typ, seq, args); err != nil {
		return err
	}
	return c.conn.Writer().Flush()
}

// reply is what recv read.
type reply struct {
	name string
	typ  thrift.MessageType
	seq  int32
	ex   *thrift.ApplicationException // for EXCEPTION messages
	str  map[string]string            // TTHeader string info
}

// recv reads one reply into result (when it is a REPLY).
func (c *testConn) recv(result thrift.FastCodec) (reply, error) {
	r := c.conn.Reader()
	name, typ, seq, body, err := transport.ReadMessage(r, c.proto, 1<<24, &c.hdr)
	if err != nil {
		return reply{}, err
	}
	rep := reply{name: string([]byte(name)), typ: typ, seq: seq}
	if len(c.hdr.StrInfo) > 0 {
		rep.str = make(map[string]string, len(c.hdr.StrInfo))
		for k, v := range c.hdr.StrInfo {
			rep.str[k] = v
		}
	}
	if typ == thrift.EXCEPTION {
		rep.ex = new(thrift.ApplicationException)
		_, err = rep.ex.FastRead(body)
	} else if result != nil {
		_, err = result.FastRead(body)
	}
	r.Release()
	return rep, err
}

// call sends an echo request and reads its reply.
func (c *testConn) call(seq int32, action, msg string, h *transport.Header) (*echotest.EchoEchoResult, reply) {
	c.t.Helper()
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: action, Msg: msg}}
	if err := c.send("echo", thrift.CALL, seq, args, h); err != nil {
		c.t.Fatalf("send: %v", err)
	}
	res := new(echotest.EchoEchoResult)
	rep, err := c.recv(res)
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	if rep.seq != seq {
		c.t.Fatalf("reply seq %d, want %d", rep.seq, seq)
	}
	return res, rep
}

var protocols = []transport.Protocol{transport.Framed, transport.Buffered, transport.TTHeader}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// expectUndecodable calls echo over each protocol on addr and checks that
// the call is answered as undecodable (PROTOCOL_ERROR, its message holding
// want) and gives back its place in flight.
func expectUndecodable(t *testing.T, s *server.Server, addr, want string) {
	t.Helper()
	for _, p := range protocols {
		c := dial(t, addr, p)
		args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo"}}
		if err := c.send("echo", thrift.CALL, 1, args, nil); err != nil {
			t.Fatal(err)
		}
		rep, err := c.recv(nil)
		if err != nil || rep.ex == nil || rep.ex.Type != thrift.ExceptionProtocolError || !strings.Contains(rep.ex.Message, want) {
			t.Errorf("%v: reply %+v %v, want a PROTOCOL_ERROR saying %q", p, rep.ex, err, want)
		}
		if n := s.Stats().InFlight; n != 0 {
			t.Errorf("%v: Stats().InFlight = %d after the answer, want 0", p, n)
		}
	}
}
