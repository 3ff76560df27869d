package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/stats"
	"github.com/petrel-rpc/petrel/transport"
)

// keeper keeps every request and context it is given.
type keeper struct {
	mu   sync.Mutex
	reqs []*echotest.Request
	ctxs []context.Context
}

func (k *keeper) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	k.mu.Lock()
	k.reqs = append(k.reqs, req)
	k.ctxs = append(k.ctxs, ctx)
	k.mu.Unlock()
	return &echotest.Response{Msg: req.Msg}, nil
}
func (k *keeper) Notify(ctx context.Context, msg string) error { return nil }

// TestKeptValuesStayValid: requests and contexts a handler keeps are its own:
// later requests (pooled argument structs, reused connection buffers) never
// change them, and a kept context still answers for its own call.
func TestKeptValuesStayValid(t *testing.T) {
	k := &keeper{}
	_, addr := startWith(t, server.New(), k)
	const n = 200
	for _, p := range []transport.Protocol{transport.TTHeader, transport.Framed} {
		c := dial(t, addr, p)
		for i := int32(0); i < n; i++ {
			// Sizes cross every inline-copy class and the >4 KiB path.
			msg := strings.Repeat(string(rune('a'+i%26)), int(i)*37%6000)
			res, _ := c.call(i, "echo", msg, nil)
			if res.Success.GetMsg() != msg {
				t.Fatalf("%v: reply %d differs", p, i)
			}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, req := range k.reqs {
		seq := int32(i % n)
		want := strings.Repeat(string(rune('a'+seq%26)), int(seq)*37%6000)
		if req.Msg != want {
			t.Fatalf("kept request %d changed (len %d, want %d)", i, len(req.Msg), len(want))
		}
		ctx := k.ctxs[i]
		if ri := rpcinfo.FromContext(ctx); ri == nil || ri.SeqID != seq || ri.Method != "echo" {
			t.Fatalf("kept context %d answers %+v", i, ri)
		}
		select {
		case <-ctx.Done():
		default:
			t.Fatalf("context %d not canceled after its handler returned", i)
		}
		if ctx.Err() != context.Canceled {
			t.Fatalf("context %d: Err() = %v", i, ctx.Err())
		}
	}
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // the second clears what the first left in sync.Pool victims
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestBufferedTrickleHoldsLinearMemory: a client sends a Buffered request of
// about 512 KiB (an echo call followed by an unknown list<string> field) one
// 2 KB string at a time. Until its last byte arrives the server holds about
// the bytes received, not a copy of the whole prefix per piece (which held
// 175 MB, 345 times the message), and then it answers the call.
func TestBufferedTrickleHoldsLinearMemory(t *testing.T) {
	_, _, addr := startServer(t)
	c := dial(t, addr, transport.Buffered)
	w := c.conn.Writer()
	B := thrift.Binary
	const elems, size = 256, 2000
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "trickled"}}
	head := make([]byte, 64+args.BLength())
	n := B.WriteMessageBegin(head, "echo", thrift.CALL, 1)
	n += args.FastWrite(head[n:]) - 1 // without the STOP that ends the struct
	n += B.WriteFieldBegin(head[n:], thrift.LIST, 9)
	n += B.WriteListBegin(head[n:], thrift.STRING, elems)
	send := func(p []byte) {
		t.Helper()
		if _, err := w.WriteBinary(p); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	send(head[:n])
	before := liveHeap()
	piece := make([]byte, 4+size)
	B.WriteString(piece, string(make([]byte, size)))
	for range elems {
		send(piece)
		time.Sleep(time.Millisecond) // one read, and one walk, per piece
	}
	time.Sleep(100 * time.Millisecond)
	grown := int64(liveHeap()) - int64(before)
	msg := elems * len(piece)
	t.Logf("%d bytes received of the message: the live heap grew by %d bytes (%.1fx)", msg, grown, float64(grown)/float64(msg))
	if grown > 8*int64(msg) {
		t.Errorf("the server holds %d bytes for the %d bytes of a message still arriving: more than 8 times as many", grown, msg)
	}
	send([]byte{byte(thrift.STOP)})
	res := new(echotest.EchoEchoResult)
	rep, err := c.recv(res)
	if err != nil || rep.seq != 1 || res.Success.GetMsg() != "trickled" {
		t.Fatalf("reply: %v, seq %d, %+v", err, rep.seq, res.Success)
	}
}

// FuzzServerInput writes arbitrary bytes to a server: it never panics or
// hangs, and it answers or closes the connection.
//
// The code an input covers depends on timing (how the bytes arrive, which
// goroutine runs first), so the fuzzer keeps finding "new" inputs and, with
// a time budget (-fuzztime 60s), spends up to a minute minimizing each: it
// then runs about 1 input per second. Bound the minimization for long runs:
//
//	go test -run '^$' -fuzz '^FuzzServerInput$' -fuzztime 10m -fuzzminimizetime 100x ./server/
//
// (about 10,000 inputs per second here). A count budget (-fuzztime 20000x,
// as make test runs it) is not affected.
func FuzzServerInput(f *testing.F) {
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader, transport.Buffered} {
		f.Add(encodeRequest(f, p))
	}
	f.Add([]byte{0, 0, 0, 10, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0x80, 0x01, 0, 1})
	f.Add([]byte{0x80, 0x01, 0x00, 0x01, 0x7f, 0xff, 0xff, 0xff})
	s, _, addr := startServer(f, server.WithMaxMessageSize(1<<16), server.WithReadTimeout(2*time.Second))
	f.Fuzz(func(t *testing.T, in []byte) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.Write(in)
		conn.(*net.TCPConn).CloseWrite()
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b [4096]byte
		for {
			if _, err := conn.Read(b[:]); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatalf("the server neither answered nor closed for % x", in[:min(len(in), 32)])
				}
				break
			}
		}
		// Handler panics (a nil request here) are answered; a panic
		// elsewhere is a bug.
		if p := s.LastPanic(); p != "" {
			t.Fatalf("panic outside a handler for % x: %s", in[:min(len(in), 64)], p)
		}
	})
}

func Example() {
	// Serve the Echo service (echotest.EchoServiceInfo is generated by petrel
	// gen) on a loopback port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := server.New(server.WithListener(ln), server.WithMaxQPS(10000))
	if err := s.RegisterService(echotest.EchoServiceInfo, &keeper{}); err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- s.Run() }()

	// A raw Framed call, as an Apache Thrift client would make it.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "hello"}}
	var frame []byte
	frame = append(frame, 0, 0, 0, 0)
	frame = append(frame, 0x80, 0x01, 0, byte(thrift.CALL), 0, 0, 0, 4)
	frame = append(frame, "echo"...)
	frame = append(frame, 0, 0, 0, 1) // seq id
	frame = append(frame, thrift.Marshal(args)...)
	n := len(frame) - 4
	frame[0], frame[1], frame[2], frame[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	conn.Write(frame)

	var size [4]byte
	io.ReadFull(conn, size[:])
	reply := make([]byte, int(size[0])<<24|int(size[1])<<16|int(size[2])<<8|int(size[3]))
	io.ReadFull(conn, reply)
	// Skip the message header: version and type (4), name (4+4), seq (4).
	res := new(echotest.EchoEchoResult)
	if err := thrift.Unmarshal(reply[16:], res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Success.GetMsg())
	conn.Close()

	fmt.Println(s.Stop(context.Background()), <-done)
	// Output:
	// hello
	// <nil> <nil>
}

// panickyResult is a result whose encoding panics, as a hand-written codec
// with a bug, or a response another goroutine changes while it is written.
type panickyResult struct{}

func (panickyResult) BLength() int                   { return 1 }
func (panickyResult) FastWrite(b []byte) int         { panic("encoder bug") }
func (panickyResult) FastRead(b []byte) (int, error) { return 0, nil }

// TestReplyEncodingPanics: a reply whose encoding panics is withdrawn and
// answered with an INTERNAL_ERROR saying so, and leaves the server whole:
// the write lock is not left held, so the connection's other requests, and
// Stop, do not wait for ever.
func TestReplyEncodingPanics(t *testing.T) {
	info := serviceInfo("Panicky",
		method("echo", nil, func() thrift.FastCodec { return panickyResult{} }, func(args, result thrift.FastCodec) error {
			if a := args.(*echotest.EchoEchoArgs); a.Req.Action == "sleep" {
				time.Sleep(100 * time.Millisecond)
			}
			return nil
		}))
	s := server.New()
	addr, stop := serveInfo(t, s, info)
	c := dial(t, addr, transport.TTHeader)
	c.conn.SetReadTimeout(3 * time.Second)
	// The second request's reply is written after the first's panicked.
	for seq, action := range []string{"now", "sleep"} {
		args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: action}}
		h := &transport.Header{Protocol: c.proto}
		if err := transport.WriteMessage(c.conn.Writer(), c.proto, h, "echo", thrift.CALL, int32(seq), args); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.conn.Writer().Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		rep, err := c.recv(nil)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if rep.ex == nil || rep.ex.Type != thrift.ExceptionInternalError || !strings.Contains(rep.ex.Message, "encoder bug") {
			t.Fatalf("a reply whose encoding panicked was answered with %+v %+v, want an INTERNAL_ERROR naming the panic", rep, rep.ex)
		}
	}
	stop(3 * time.Second)
	if n := s.Stats().Panics; n != 2 {
		t.Errorf("Stats().Panics = %d, want 2", n)
	}
}

// panickyArgs is an argument struct whose decoding panics.
type panickyArgs struct{}

func (*panickyArgs) BLength() int                   { return 1 }
func (*panickyArgs) FastWrite(b []byte) int         { b[0] = 0; return 1 }
func (*panickyArgs) FastRead(b []byte) (int, error) { panic("decoder bug") }

// TestArgsDecodingPanics: arguments whose decoding panics are answered as
// undecodable (PROTOCOL_ERROR), and the request gives back its place in
// flight: it does not hold WithMaxInFlight's capacity, Stats().InFlight or
// Stop's drain for good.
func TestArgsDecodingPanics(t *testing.T) {
	info := serviceInfo("Panicky", method("echo", func() thrift.FastCodec { return new(panickyArgs) }, nil, nil))
	s := server.New(server.WithMaxInFlight(1))
	addr, stop := serveInfo(t, s, info)
	expectUndecodable(t, s, addr, "decoder bug")
	start := time.Now()
	stop(10 * time.Second)
	if d := time.Since(start); d >= server.DefaultExitWaitTime {
		t.Errorf("Stop drained for %v: a request was left in flight", d)
	}
	if n := s.Stats().Panics; n != int64(len(protocols)) {
		t.Errorf("Stats().Panics = %d, want %d", n, len(protocols))
	}
}

// goexitArgs is an argument struct whose decoding calls runtime.Goexit (as
// t.FailNow in a test's codec would).
type goexitArgs struct{}

func (*goexitArgs) BLength() int                   { return 1 }
func (*goexitArgs) FastWrite(b []byte) int         { b[0] = 0; return 1 }
func (*goexitArgs) FastRead(b []byte) (int, error) { runtime.Goexit(); return 0, nil }

// TestArgsDecodingGoexit: arguments whose decoding ends the reader's
// goroutine close the connection (the client sees it closed, not a
// silence), and the request gives back its place in flight and is counted
// as a panic: a later request is served under WithMaxInFlight(1), and Stop
// does not wait for it.
func TestArgsDecodingGoexit(t *testing.T) {
	info := serviceInfo("G",
		method("bad", func() thrift.FastCodec { return new(goexitArgs) }, nil, nil),
		method("echo", nil, nil, func(args, result thrift.FastCodec) error {
			result.(*echotest.EchoEchoResult).Success = &echotest.Response{Msg: "ok"}
			return nil
		}))
	s := server.New(server.WithMaxInFlight(1))
	addr, stop := serveInfo(t, s, info)
	for _, p := range protocols {
		c := dial(t, addr, p)
		c.conn.SetReadTimeout(3 * time.Second)
		if err := c.send("bad", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{}}, nil); err != nil {
			t.Fatal(err)
		}
		if rep, err := c.recv(nil); !errors.Is(err, netpoll.ErrPeerClosed) && !errors.Is(err, netpoll.ErrConnReset) {
			t.Fatalf("%v: the request whose codec called Goexit got %+v, %v; want its connection closed", p, rep, err)
		}
		if n := s.Stats().InFlight; n != 0 {
			t.Fatalf("%v: Stats().InFlight = %d after the connection closed, want 0", p, n)
		}
		c2 := dial(t, addr, p)
		c2.conn.SetReadTimeout(3 * time.Second)
		if err := c2.send("echo", thrift.CALL, 2, &echotest.EchoEchoArgs{Req: &echotest.Request{}}, nil); err != nil {
			t.Fatal(err)
		}
		rep, err := c2.recv(new(echotest.EchoEchoResult))
		if err != nil || rep.ex != nil {
			t.Fatalf("%v: a later request got %+v, %v; want it served (WithMaxInFlight(1))", p, rep.ex, err)
		}
	}
	start := time.Now()
	stop(10 * time.Second)
	if d := time.Since(start); d >= server.DefaultExitWaitTime {
		t.Errorf("Stop drained for %v: a request was left in flight", d)
	}
	if n := s.Stats().Panics; n != int64(len(protocols)) {
		t.Errorf("Stats().Panics = %d, want %d", n, len(protocols))
	}
}

// sizePanicResult is a result whose sizing panics (a hand-written codec's
// bug).
type sizePanicResult struct{}

func (sizePanicResult) BLength() int                   { panic("sizing bug") }
func (sizePanicResult) FastWrite(b []byte) int         { panic("sizing bug") }
func (sizePanicResult) FastRead(b []byte) (int, error) { return 0, nil }

// finishRecorder is a tracer that keeps the Stats of each call it finishes.
type finishRecorder struct {
	mu  sync.Mutex
	sts []stats.Stats
}

func (r *finishRecorder) Start(ctx context.Context) context.Context { return ctx }
func (r *finishRecorder) Finish(ctx context.Context, st *stats.Stats) {
	r.mu.Lock()
	r.sts = append(r.sts, *st)
	r.mu.Unlock()
}

// TestTracedReplyEncodingPanics: with a tracer, a reply whose codec panics
// while it is sized is still answered with an INTERNAL_ERROR naming the
// panic, as without one (TestReplyEncodingPanics), and the tracer still
// finishes the call, with no response size.
func TestTracedReplyEncodingPanics(t *testing.T) {
	info := serviceInfo("Panicky", method("echo", nil, func() thrift.FastCodec { return sizePanicResult{} }, nil))
	tr := &finishRecorder{}
	s := server.New(server.WithTracer(tr))
	addr, stop := serveInfo(t, s, info)
	for _, p := range protocols {
		c := dial(t, addr, p)
		c.conn.SetReadTimeout(3 * time.Second)
		if err := c.send("echo", thrift.CALL, 7, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo"}}, nil); err != nil {
			t.Fatal(err)
		}
		rep, err := c.recv(nil)
		if err != nil || rep.ex == nil || rep.ex.Type != thrift.ExceptionInternalError || !strings.Contains(rep.ex.Message, "sizing bug") {
			t.Fatalf("%v: reply %+v, %v; want an INTERNAL_ERROR naming the panic", p, rep, err)
		}
	}
	stop(3 * time.Second)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.sts) != len(protocols) {
		t.Fatalf("the tracer finished %d calls, want %d", len(tr.sts), len(protocols))
	}
	for _, st := range tr.sts {
		if st.ResponseSize != 0 || st.Send.IsZero() {
			t.Errorf("traced %+v: want ResponseSize 0 and Send set", st)
		}
	}
}
