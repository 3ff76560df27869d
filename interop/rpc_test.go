package interop_test

// RPC interop: Apache Thrift 0.17.0's Go client against Petrel's server, and
// Petrel's client against Apache's TSimpleServer, over Framed and Buffered
// transports with the binary protocol, on InteropService (idl/everything.thrift).
// The handlers on both sides behave alike (see echoBehaviour); each test
// checks what the handler received as well as what the caller got back, so
// that a fault in one direction cannot be hidden by the same fault in the
// other. A last test runs Petrel against Petrel over TTHeader with metainfo
// and business status errors through the generated code.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	athrift "github.com/apache/thrift/lib/go/thrift"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	ae "github.com/petrel-rpc/petrel/interop/gen-apache/everything"
	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

// callTimeout bounds every call of these tests (generous: -race on a
// shared two-core machine).
const callTimeout = 10 * time.Second

// The Text of an echoed value selects what the handlers do instead of
// echoing (both handlers, Petrel's and Apache's).
const (
	textOops  = "oops"  // return the declared exception Oops (oopsFor)
	textFail  = "fail"  // return a plain error
	textPanic = "panic" // panic (Petrel handler only)
	textBiz   = "biz"   // return rpcerr.BizStatusError (Petrel handler only)
	textMeta  = "meta"  // echo with StringMap = what the call carried (Petrel only)
	textFwd   = "forward"
	textBig   = "big"     // echo with a bigBlob-byte Blob (Apache handler only)
	textAbort = "abandon" // return ErrAbandonRequest: Apache's server drops the connection
)

// bigBlob is the size of the Blob that textBig replies carry.
const bigBlob = 256 << 10

// The declared exception both handlers return for textOops, and Pick for
// Color NEGATIVE (Code is then the number of inners).
const (
	oopsCode    = 418
	oopsMessage = "short and stout"
	oopsInnerID = 99
	failMessage = "plain failure from the handler"
)

// expectation records, under mu, what a handler received against what the
// test said it would send: the handler compares at once (Petrel's server
// reuses argument structs after the handler returns) and keeps the verdict.
type expectation struct {
	mu    sync.Mutex
	want  any      // guarded by mu; the value the next echo should receive
	diffs []string // guarded by mu; one verdict per echo received ("" = equal)
}

func (e *expectation) expect(v any) {
	e.mu.Lock()
	e.want, e.diffs = v, nil
	e.mu.Unlock()
}

func (e *expectation) received(got any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.want == nil {
		e.diffs = append(e.diffs, "an echo arrived while none was expected")
		return
	}
	e.diffs = append(e.diffs, diffEverything(got, e.want))
}

// diffEverything is diff, with the Blob of Everything values (pe or ae)
// compared with bytes.Equal first: diff walks a []byte element by element
// through reflect, which takes seconds for a megabyte under -race. (Blob is
// not optional: nil and empty are equal, as in diff.)
func diffEverything(a, b any) string {
	switch x := a.(type) {
	case *pe.Everything:
		if y, ok := b.(*pe.Everything); ok && x != nil && y != nil {
			if !bytes.Equal(x.Blob, y.Blob) {
				return fmt.Sprintf("Blob differs (lengths %d, %d)", len(x.Blob), len(y.Blob))
			}
			x2, y2 := *x, *y
			x2.Blob, y2.Blob = nil, nil
			return diff(&x2, &y2)
		}
	case *ae.Everything:
		if y, ok := b.(*ae.Everything); ok && x != nil && y != nil {
			if !bytes.Equal(x.Blob, y.Blob) {
				return fmt.Sprintf("Blob differs (lengths %d, %d)", len(x.Blob), len(y.Blob))
			}
			x2, y2 := *x, *y
			x2.Blob, y2.Blob = nil, nil
			return diff(&x2, &y2)
		}
	}
	return diff(a, b)
}

// check fails t unless exactly one echo arrived since expect and it held
// the expected value.
func (e *expectation) check(t *testing.T, what string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.diffs) != 1 || e.diffs[0] != "" {
		t.Errorf("%s: the handler received: %q (want one value equal to the one sent)", what, e.diffs)
	}
	e.want = nil
}

// petrelHandler implements Petrel's generated InteropService.
type petrelHandler struct {
	echoes   expectation
	notified chan string

	mu   sync.Mutex
	next pe.InteropServiceClient // guarded by mu; where textFwd forwards to
}

func newPetrelHandler() *petrelHandler {
	return &petrelHandler{notified: make(chan string, 64)}
}

func (h *petrelHandler) Echo(ctx context.Context, v *pe.Everything) (*pe.Everything, error) {
	switch v.GetText() {
	case textOops:
		return nil, &pe.Oops{Code: oopsCode, Message: oopsMessage, Detail: &pe.Inner{ID: oopsInnerID}}
	case textFail:
		return nil, errors.New(failMessage)
	case textPanic:
		panic("handler panics on purpose")
	case textBiz:
		return nil, rpcerr.NewBizStatusError(1001, "no stock").SetExtra("sku", "42")
	case textMeta:
		out := pe.NewEverything()
		out.Text = textMeta
		out.StringMap = map[string]string{}
		if v, ok := metainfo.GetValue(ctx, "tenant"); ok {
			out.StringMap["tenant"] = v
		}
		if v, ok := metainfo.GetPersistentValue(ctx, "trace"); ok {
			out.StringMap["trace"] = v
		}
		if ri := rpcinfo.FromContext(ctx); ri != nil {
			out.StringMap["caller"] = ri.Caller
			out.StringMap["callee"] = ri.Callee
			out.StringMap["method"] = ri.Method
			out.StringMap["protocol"] = ri.Protocol
		}
		return out, nil
	case textFwd:
		h.mu.Lock()
		next := h.next
		h.mu.Unlock()
		if next == nil {
			return nil, errors.New("forward: no next hop configured")
		}
		req := pe.NewEverything()
		req.Text = textMeta
		return next.Echo(ctx, req)
	}
	h.echoes.received(v)
	return v, nil
}

func (h *petrelHandler) Add(_ context.Context, a int32, b int64) (int64, error) {
	if a < 0 {
		return 0, errors.New(failMessage)
	}
	return int64(a) + b, nil
}

func (h *petrelHandler) Notify(_ context.Context, msg string) error {
	h.notified <- msg
	return nil
}

func (h *petrelHandler) Ping(context.Context) error { return nil }

func (h *petrelHandler) Pick(_ context.Context, c pe.Color, inners []*pe.Inner) (*pe.Choice, error) {
	if c == pe.Color_NEGATIVE {
		return nil, &pe.Oops{Code: int32(len(inners)), Message: oopsMessage}
	}
	words := []string{c.String()}
	for _, in := range inners {
		words = append(words, fmt.Sprintf("%d:%s", in.ID, in.Name))
	}
	return &pe.Choice{Words: words}, nil
}

// apacheHandler implements Apache's generated InteropService alike.
type apacheHandler struct {
	echoes   expectation
	notified chan string
}

func newApacheHandler() *apacheHandler {
	return &apacheHandler{notified: make(chan string, 64)}
}

func (h *apacheHandler) Echo(_ context.Context, v *ae.Everything) (*ae.Everything, error) {
	switch v.GetText() {
	case textOops:
		return nil, &ae.Oops{Code: oopsCode, Message: oopsMessage, Detail: &ae.Inner{ID: oopsInnerID}}
	case textFail:
		return nil, errors.New(failMessage)
	case textBig:
		v.Blob = make([]byte, bigBlob)
		return v, nil
	case textAbort:
		return nil, athrift.ErrAbandonRequest
	}
	h.echoes.received(v)
	return v, nil
}

func (h *apacheHandler) Add(_ context.Context, a int32, b int64) (int64, error) {
	if a < 0 {
		return 0, errors.New(failMessage)
	}
	return int64(a) + b, nil
}

func (h *apacheHandler) Notify(_ context.Context, msg string) error {
	h.notified <- msg
	return nil
}

func (h *apacheHandler) Ping(context.Context) error { return nil }

func (h *apacheHandler) Pick(_ context.Context, c ae.Color, inners []*ae.Inner) (*ae.Choice, error) {
	if c == ae.Color_NEGATIVE {
		return nil, &ae.Oops{Code: int32(len(inners)), Message: oopsMessage}
	}
	words := []string{pe.Color(c).String()}
	for _, in := range inners {
		words = append(words, fmt.Sprintf("%d:%s", in.ID, in.Name))
	}
	return &ae.Choice{Words: words}, nil
}

// echoValues are the Everything values every echo test sends: every field
// set, optional fields unset, and random ones.
func echoValues() []*pe.Everything {
	vs := []*pe.Everything{fullValue(), sparseValue()}
	r := rand.New(rand.NewPCG(7, 11))
	for range 6 {
		vs = append(vs, randomValue(r))
	}
	return vs
}

// withText returns the sparse value (which Apache can write: its struct
// fields are set) with Text t.
func withText(t string) *pe.Everything {
	v := sparseValue()
	v.Text = t
	return v
}

// waitNotified waits up to 5 s for msg on ch.
func waitNotified(t *testing.T, ch <-chan string, msg string) {
	t.Helper()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case got := <-ch:
		if got != msg {
			t.Errorf("the oneway call delivered %q, want %q", got, msg)
		}
	case <-timer.C:
		t.Errorf("the oneway call %q did not reach the handler within 5 s", msg)
	}
}

// startPetrel serves h with Petrel's server on a loopback port until the
// test ends.
func startPetrel(t *testing.T, h pe.InteropService, opts ...server.Option) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := pe.NewInteropServiceServer(h, append(opts, server.WithListener(ln))...)
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Petrel server Stop: %v", err)
		}
		if err := <-done; err != nil && !errors.Is(err, server.ErrServerStopped) {
			t.Errorf("Petrel server Run: %v", err)
		}
	})
	addr := ln.Addr().String()
	// One call before the test goes on: the server answers, and Stop never
	// overlaps Run starting up.
	c, err := pe.NewInteropServiceClient("InteropService", client.WithHostPorts(addr), client.WithShortConnection())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("first ping of the Petrel server: %v", err)
	}
	return addr
}

// startApache serves h with Apache's TSimpleServer (framed or buffered
// transport, binary protocol) on a loopback port until the test ends. Its
// Stop waits for the clients to close their connections (up to
// apacheStopTimeout): a slow Stop means a client left one open.
func startApache(t *testing.T, h ae.InteropService, framed bool) string {
	t.Helper()
	sock, err := athrift.NewTServerSocket("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Listen(); err != nil {
		t.Fatal(err)
	}
	conf := &athrift.TConfiguration{}
	var tf athrift.TTransportFactory = athrift.NewTBufferedTransportFactory(4096)
	if framed {
		tf = athrift.NewTFramedTransportFactoryConf(athrift.NewTTransportFactory(), conf)
	}
	srv := athrift.NewTSimpleServer4(ae.NewInteropServiceProcessor(h), sock, tf,
		athrift.NewTBinaryProtocolFactoryConf(conf))
	srv.SetLogger(func(msg string) { t.Logf("Apache server: %s", msg) })
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		start := time.Now()
		if err := srv.Stop(); err != nil {
			t.Errorf("Apache server Stop: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Apache server Serve: %v", err)
		}
		if d := time.Since(start); d >= apacheStopTimeout-500*time.Millisecond {
			t.Errorf("Apache server Stop took %v: a client left its connection open", d)
		}
	})
	return sock.Addr().String()
}

// dialApache returns Apache's generated client over a new connection to
// addr (framed or buffered transport, strict binary protocol), closed when
// the test ends.
func dialApache(t *testing.T, addr string, framed bool) *ae.InteropServiceClient {
	t.Helper()
	return dialApacheWith(t, addr, func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
		trans := athrift.TTransport(athrift.NewTBufferedTransport(sock, 4096))
		if framed {
			trans = athrift.NewTFramedTransportConf(sock, conf)
		}
		return trans, athrift.NewTBinaryProtocolConf(trans, conf)
	})
}

// dialApacheWith returns Apache's generated client over a new connection
// to addr with the transport and protocol stack wrap builds on the socket;
// the transport is closed when the test ends.
func dialApacheWith(t *testing.T, addr string,
	wrap func(athrift.TTransport, *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol)) *ae.InteropServiceClient {
	t.Helper()
	conf := &athrift.TConfiguration{ConnectTimeout: callTimeout, SocketTimeout: callTimeout}
	trans, proto := wrap(athrift.NewTSocketConf(addr, conf), conf)
	if err := trans.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { trans.Close() })
	return ae.NewInteropServiceClient(athrift.NewTStandardClient(proto, proto))
}

// apacheAppException returns the Apache application exception in err.
func apacheAppException(err error) (athrift.TApplicationException, bool) {
	var ex athrift.TApplicationException
	return ex, errors.As(err, &ex)
}

// TestApacheClientPetrelServer: Apache's generated client (TFramedTransport
// with the binary and the compact protocol, and buffered TSocket with the
// binary protocol) calls Petrel's generated server. Every type round-trips through echo, the declared exception arrives as Apache's
// *Oops with its fields, the oneway call reaches the handler, and failures
// on the Petrel side (plain error, panic, business status without TTHeader,
// unknown method) arrive as TApplicationExceptions, after which the
// connection still serves calls.
func TestApacheClientPetrelServer(t *testing.T) {
	stacks := []struct {
		name string
		wrap func(athrift.TTransport, *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol)
	}{
		{"framed", func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
			trans := athrift.NewTFramedTransportConf(sock, conf)
			return trans, athrift.NewTBinaryProtocolConf(trans, conf)
		}},
		{"buffered", func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
			trans := athrift.NewTBufferedTransport(sock, 4096)
			return trans, athrift.NewTBinaryProtocolConf(trans, conf)
		}},
		// Petrel's server also reads the compact protocol inside a frame
		// (and answers in it).
		{"framed-compact", func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
			trans := athrift.NewTFramedTransportConf(sock, conf)
			return trans, athrift.NewTCompactProtocolConf(trans, conf)
		}},
	}
	for _, st := range stacks {
		t.Run(st.name, func(t *testing.T) {
			h := newPetrelHandler()
			apacheCallsPetrel(t, dialApacheWith(t, startPetrel(t, h), st.wrap), h, st.name)
		})
	}
}

// apacheCallsPetrel runs the calls of TestApacheClientPetrelServer through c.
func apacheCallsPetrel(t *testing.T, c *ae.InteropServiceClient, h *petrelHandler, name string) {
	ctx := context.Background()

	for i, v := range echoValues() {
		h.echoes.expect(v)
		got, err := c.Echo(ctx, toApache(v))
		if err != nil {
			t.Fatalf("echo %d: %v", i, err)
		}
		h.echoes.check(t, fmt.Sprintf("echo %d", i))
		if d := diffEverything(got, toApache(v)); d != "" {
			t.Errorf("echo %d: Apache got back a different value: %s", i, d)
		}
	}

	_, err := c.Echo(ctx, toApache(withText(textOops)))
	var oops *ae.Oops
	if !errors.As(err, &oops) || oops.Code != oopsCode || oops.Message != oopsMessage ||
		oops.Detail == nil || oops.Detail.ID != oopsInnerID {
		t.Errorf("echo returning Oops: Apache got %v (%T), want *Oops{%d %q %d}", err, err, oopsCode, oopsMessage, oopsInnerID)
	}

	inners := []*ae.Inner{{ID: 1, Name: "a"}, {ID: 2, Name: "b", Weight: ptr(int64(3))}}
	choice, err := c.Pick(ctx, ae.Color_BLUE, inners)
	if err != nil || choice.Words == nil || strings.Join(choice.Words, ",") != "BLUE,1:a,2:b" || choice.IsSetNumber() {
		t.Errorf("pick: %v, %v; want words BLUE,1:a,2:b", choice, err)
	}
	_, err = c.Pick(ctx, ae.Color_NEGATIVE, inners)
	if !errors.As(err, &oops) || oops.Code != 2 {
		t.Errorf("pick NEGATIVE: %v, want Oops with code 2", err)
	}

	if sum, err := c.Add(ctx, 40, 1<<40); err != nil || sum != 40+1<<40 {
		t.Errorf("add = %d, %v", sum, err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}

	failures := []struct {
		what, text string
		typ        int32
		msg        string
	}{
		{"a plain error", textFail, athrift.INTERNAL_ERROR, failMessage},
		{"a panic", textPanic, athrift.INTERNAL_ERROR, "panic in handler"},
		{"a business status without TTHeader", textBiz, athrift.INTERNAL_ERROR, "business status 1001: no stock"},
	}
	for _, f := range failures {
		_, err := c.Echo(ctx, toApache(withText(f.text)))
		ex, ok := apacheAppException(err)
		if !ok || ex.TypeId() != f.typ || !strings.Contains(ex.Error(), f.msg) {
			t.Errorf("handler returning %s: Apache got %v (%T), want a TApplicationException type %d saying %q", f.what, err, err, f.typ, f.msg)
		}
	}
	if _, err := c.Add(ctx, -1, 0); !strings.Contains(fmt.Sprint(err), failMessage) {
		t.Errorf("add failing: %v", err)
	}

	_, err = c.Client_().Call(ctx, "noSuchMethod", ae.NewInteropServicePingArgs(), ae.NewInteropServicePingResult())
	if ex, ok := apacheAppException(err); !ok || ex.TypeId() != athrift.UNKNOWN_METHOD {
		t.Errorf("unknown method: Apache got %v (%T), want UNKNOWN_METHOD", err, err)
	}

	for i := range 3 {
		msg := fmt.Sprintf("%s note %d", name, i)
		if err := c.Notify(ctx, msg); err != nil {
			t.Fatalf("notify: %v", err)
		}
		waitNotified(t, h.notified, msg)
	}
	// The connection is still in step after the exceptions and the
	// oneway calls (no reply was left unread, none is missing).
	if sum, err := c.Add(ctx, 1, 2); err != nil || sum != 3 {
		t.Errorf("add after the rest = %d, %v", sum, err)
	}
}

// petrelClientConfigs are the Petrel client set-ups that can talk to an
// Apache server of the given transport: long-lived pooled and short
// connections (the mux pool needs TTHeader, which Apache does not speak).
func petrelClientConfigs(p transport.Protocol) []struct {
	name string
	opts []client.Option
} {
	base := []client.Option{client.WithTransport(p), client.WithRPCTimeout(callTimeout)}
	return []struct {
		name string
		opts []client.Option
	}{
		{"long", base},
		{"short", append(base[:len(base):len(base)], client.WithShortConnection())},
	}
}

// TestPetrelClientApacheServer: Petrel's generated client (Framed and
// Buffered, long and short connections) calls Apache's TSimpleServer
// (framed, buffered). Every type round-trips, the declared exception comes
// back as Petrel's *Oops (errors.As, rpcerr Declared), the oneway call
// reaches Apache's handler, and an unknown method or an Apache handler's
// plain error gives an application exception with rpcerr code Application.
func TestPetrelClientApacheServer(t *testing.T) {
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		for _, cfg := range petrelClientConfigs(p) {
			t.Run(p.String()+"/"+cfg.name, func(t *testing.T) {
				h := newApacheHandler()
				addr := startApache(t, h, p == transport.Framed)
				cl, err := client.New("InteropService", append([]client.Option{client.WithHostPorts(addr)}, cfg.opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				c := pe.NewInteropServiceClientFrom(cl)
				// Registered after the server's: runs first, so the server's
				// Stop sees the connections closed.
				t.Cleanup(func() {
					if err := c.Close(); err != nil {
						t.Errorf("client Close: %v", err)
					}
				})
				petrelCallsApache(t, cl, c, h, p.String()+"/"+cfg.name)
			})
		}
	}
}

func petrelCallsApache(t *testing.T, cl *client.Client, c pe.InteropServiceClient, h *apacheHandler, name string) {
	ctx := context.Background()
	for i, v := range echoValues() {
		h.echoes.expect(toApache(v))
		got, err := c.Echo(ctx, v)
		if err != nil {
			t.Fatalf("echo %d: %v", i, err)
		}
		h.echoes.check(t, fmt.Sprintf("echo %d", i))
		if d := diffEverything(got, v); d != "" {
			t.Errorf("echo %d: Petrel got back a different value: %s", i, d)
		}
	}

	_, err := c.Echo(ctx, withText(textOops))
	var oops *pe.Oops
	if !errors.As(err, &oops) || oops.Code != oopsCode || oops.Message != oopsMessage ||
		oops.Detail == nil || oops.Detail.ID != oopsInnerID {
		t.Errorf("echo returning Oops: Petrel got %v (%T), want *Oops{%d %q %d}", err, err, oopsCode, oopsMessage, oopsInnerID)
	}
	if code := rpcerr.CodeOf(err); code != rpcerr.Declared {
		t.Errorf("echo returning Oops: rpcerr.CodeOf = %v, want Declared", code)
	}

	inners := []*pe.Inner{{ID: 1, Name: "a"}, {ID: 2, Name: "b", Weight: ptr(int64(3))}}
	choice, err := c.Pick(ctx, pe.Color_RED, inners)
	if err != nil || strings.Join(choice.Words, ",") != "RED,1:a,2:b" || choice.Number != nil {
		t.Errorf("pick: %v, %v; want words RED,1:a,2:b", choice, err)
	}
	_, err = c.Pick(ctx, pe.Color_NEGATIVE, inners)
	if !errors.As(err, &oops) || oops.Code != 2 || rpcerr.CodeOf(err) != rpcerr.Declared {
		t.Errorf("pick NEGATIVE: %v, want Oops with code 2", err)
	}

	if sum, err := c.Add(ctx, 40, 1<<40); err != nil || sum != 40+1<<40 {
		t.Errorf("add = %d, %v", sum, err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}

	// Apache's processor answers a handler's plain error with INTERNAL_ERROR
	// "Internal error processing <method>: <error>".
	var appEx *thrift.ApplicationException
	_, err = c.Echo(ctx, withText(textFail))
	if !errors.As(err, &appEx) || appEx.Type != thrift.ExceptionInternalError || !strings.Contains(appEx.Message, failMessage) {
		t.Errorf("Apache handler failing: Petrel got %v (%T), want an INTERNAL_ERROR application exception saying %q", err, err, failMessage)
	}
	if code := rpcerr.CodeOf(err); code != rpcerr.Application {
		t.Errorf("Apache handler failing: rpcerr.CodeOf = %v, want Application", code)
	}
	if _, err := c.Add(ctx, -1, 0); rpcerr.CodeOf(err) != rpcerr.Application || !strings.Contains(fmt.Sprint(err), failMessage) {
		t.Errorf("add failing: %v (code %v)", err, rpcerr.CodeOf(err))
	}

	err = cl.Call(ctx, "noSuchMethod", false, pe.NewInteropServicePingArgs(), pe.NewInteropServicePingResult())
	if !errors.As(err, &appEx) || appEx.Type != thrift.ExceptionUnknownMethod || rpcerr.CodeOf(err) != rpcerr.Application {
		t.Errorf("unknown method: Petrel got %v (%T, code %v), want UNKNOWN_METHOD, Application", err, err, rpcerr.CodeOf(err))
	}

	for i := range 3 {
		msg := fmt.Sprintf("%s note %d", name, i)
		if err := c.Notify(ctx, msg); err != nil {
			t.Fatalf("notify: %v", err)
		}
		waitNotified(t, h.notified, msg)
	}
	if sum, err := c.Add(ctx, 1, 2); err != nil || sum != 3 {
		t.Errorf("add after the rest = %d, %v", sum, err)
	}
}

// TestPetrelTTHeader: Petrel's generated client and server over TTHeader
// (long and mux pools): metainfo reaches the handler (transient one hop,
// persistent every hop, through a handler that calls on with its own
// context), rpcinfo carries caller, callee and method, a BizStatusError
// comes back as one with its extra, a declared exception as its type, and
// a panic as an Application error.
func TestPetrelTTHeader(t *testing.T) {
	h := newPetrelHandler()
	addr := startPetrel(t, h)
	next, err := pe.NewInteropServiceClient("InteropService", client.WithHostPorts(addr),
		client.WithCallerName("hop-one"), client.WithRPCTimeout(callTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { next.Close() })
	h.mu.Lock()
	h.next = next
	h.mu.Unlock()

	for _, cfg := range []struct {
		name string
		opts []client.Option
	}{
		{"long", nil},
		{"mux", []client.Option{client.WithMuxConnection(2)}},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			c, err := pe.NewInteropServiceClient("InteropService", append([]client.Option{
				client.WithHostPorts(addr), client.WithTransport(transport.TTHeader),
				client.WithCallerName("interop-test"), client.WithRPCTimeout(callTimeout),
			}, cfg.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := metainfo.WithValue(context.Background(), "tenant", "t-"+cfg.name)
			ctx = metainfo.WithPersistentValue(ctx, "trace", "x-"+cfg.name)

			for i, v := range echoValues()[:3] {
				h.echoes.expect(v)
				got, err := c.Echo(ctx, v)
				if err != nil {
					t.Fatalf("echo %d: %v", i, err)
				}
				h.echoes.check(t, fmt.Sprintf("echo %d", i))
				if d := diffEverything(got, v); d != "" {
					t.Errorf("echo %d: %s", i, d)
				}
			}

			got, err := c.Echo(ctx, withText(textMeta))
			want := map[string]string{"tenant": "t-" + cfg.name, "trace": "x-" + cfg.name,
				"caller": "interop-test", "callee": "InteropService", "method": "echo", "protocol": transport.TTHeader.String()}
			if err != nil {
				t.Fatalf("echo meta: %v", err)
			}
			if d := diff(got.StringMap, want); d != "" {
				t.Errorf("the handler saw %v, want %v (%s)", got.StringMap, want, d)
			}

			// The handler calls on with its context: the persistent value
			// travels, the transient one stops after one hop.
			got, err = c.Echo(ctx, withText(textFwd))
			want = map[string]string{"trace": "x-" + cfg.name,
				"caller": "hop-one", "callee": "InteropService", "method": "echo", "protocol": transport.TTHeader.String()}
			if err != nil {
				t.Fatalf("echo forward: %v", err)
			}
			if d := diff(got.StringMap, want); d != "" {
				t.Errorf("the second hop saw %v, want %v (%s)", got.StringMap, want, d)
			}

			_, err = c.Echo(ctx, withText(textBiz))
			var biz *rpcerr.BizStatusError
			if !errors.As(err, &biz) || biz.StatusCode != 1001 || biz.Message != "no stock" || biz.Extra["sku"] != "42" {
				t.Errorf("business status: %v (%T), want BizStatusError 1001 no stock sku=42", err, err)
			}
			if code := rpcerr.CodeOf(err); code != rpcerr.Business {
				t.Errorf("business status: rpcerr.CodeOf = %v, want Business", code)
			}

			_, err = c.Echo(ctx, withText(textOops))
			var oops *pe.Oops
			if !errors.As(err, &oops) || oops.Code != oopsCode || oops.Detail == nil || oops.Detail.ID != oopsInnerID {
				t.Errorf("declared exception: %v (%T)", err, err)
			}
			_, err = c.Echo(ctx, withText(textPanic))
			var appEx *thrift.ApplicationException
			if !errors.As(err, &appEx) || appEx.Type != thrift.ExceptionInternalError || rpcerr.CodeOf(err) != rpcerr.Application {
				t.Errorf("panic: %v (%T, code %v)", err, err, rpcerr.CodeOf(err))
			}

			msg := "ttheader note " + cfg.name
			if err := c.Notify(ctx, msg); err != nil {
				t.Fatalf("notify: %v", err)
			}
			waitNotified(t, h.notified, msg)
			if sum, err := c.Add(ctx, 2, 3); err != nil || sum != 5 {
				t.Errorf("add after the rest = %d, %v", sum, err)
			}
		})
	}
}
