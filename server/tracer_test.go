package server_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/stats"
)

// traced is what a recordingTracer saw of one call.
type traced struct {
	method string
	st     stats.Stats
	marked bool   // the context Finish got is the one Start returned
	token  string // server side: the metainfo value the client's Start set
}

type markKey struct{}

// recordingTracer records every finished call; on the client its Start
// adds a transient metainfo value, which the server's tracer reads back.
type recordingTracer struct {
	mu    sync.Mutex
	calls []traced // guarded by mu
}

func (r *recordingTracer) Start(ctx context.Context) context.Context {
	ctx = context.WithValue(ctx, markKey{}, true)
	if ri := rpcinfo.FromContext(ctx); ri != nil {
		ctx = metainfo.WithValue(ctx, "trace-token", "tok-"+ri.Method)
	}
	return ctx
}

func (r *recordingTracer) Finish(ctx context.Context, st *stats.Stats) {
	tr := traced{st: *st, marked: ctx.Value(markKey{}) != nil}
	if ri := rpcinfo.FromContext(ctx); ri != nil {
		tr.method = ri.Method
	}
	tr.token, _ = metainfo.GetValue(ctx, "trace-token")
	r.mu.Lock()
	r.calls = append(r.calls, tr)
	r.mu.Unlock()
}

func (r *recordingTracer) take() []traced {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func TestTracer(t *testing.T) {
	srvT := new(recordingTracer)
	_, _, addr := startServer(t, server.WithTracer(srvT))
	for _, pool := range []struct {
		name string
		opt  client.Option
	}{
		{"long", client.WithLongConnection(client.LongPoolConfig{})},
		{"mux", client.WithMuxConnection(1)},
	} {
		t.Run(pool.name, func(t *testing.T) {
			cliT := new(recordingTracer)
			cli, err := echotest.NewEchoClient("Echo", client.WithHostPorts(addr), pool.opt, client.WithTracer(cliT))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			msg := strings.Repeat("m", 300)
			if _, err := cli.Echo(context.Background(), &echotest.Request{Action: "sleep", Msg: "2ms"}); err != nil {
				t.Fatal(err)
			}
			if _, err := cli.Echo(context.Background(), &echotest.Request{Action: "echo", Msg: msg}); err != nil {
				t.Fatal(err)
			}
			_, ferr := cli.Echo(context.Background(), &echotest.Request{Action: "fail", Msg: "x"})
			if ferr == nil {
				t.Fatal("fail action succeeded")
			}
			cs := cliT.take()
			// The server finishes after writing the reply, possibly after
			// the client returned: wait for its records.
			var ss []traced
			for deadline := time.Now().Add(2 * time.Second); len(ss) < 3 && time.Now().Before(deadline); {
				ss = append(ss, srvT.take()...)
				time.Sleep(time.Millisecond)
			}
			if len(cs) != 3 || len(ss) != 3 {
				t.Fatalf("client traced %d calls, server %d; want 3 and 3", len(cs), len(ss))
			}
			for i, c := range cs {
				st := c.st
				if !c.marked || c.method != "echo" || st.Side != stats.Client {
					t.Fatalf("client call %d: %+v", i, c)
				}
				if !(st.Begin.Before(st.Send) || st.Begin.Equal(st.Send)) || st.Receive.Before(st.Send) || st.End.Before(st.Receive) {
					t.Fatalf("client call %d: times out of order: begin %v send %v receive %v end %v", i, st.Begin, st.Send, st.Receive, st.End)
				}
				if st.RequestSize <= 0 || (i < 2 && st.ResponseSize <= 0) {
					t.Fatalf("client call %d: sizes %d %d", i, st.RequestSize, st.ResponseSize)
				}
			}
			if cs[0].st.Latency() < 2*time.Millisecond {
				t.Fatalf("a 2 ms handler traced at %v on the client", cs[0].st.Latency())
			}
			if cs[1].st.RequestSize < 300 || cs[1].st.ResponseSize < 300 {
				t.Fatalf("300-byte message: request %d response %d bytes", cs[1].st.RequestSize, cs[1].st.ResponseSize)
			}
			if cs[2].st.Error != ferr || cs[0].st.Error != nil {
				t.Fatalf("client errors: %v %v", cs[0].st.Error, cs[2].st.Error)
			}
			var srvErr int
			for i, c := range ss {
				st := c.st
				if !c.marked || c.method != "echo" || st.Side != stats.Server || c.token != "tok-echo" {
					t.Fatalf("server call %d: %+v (metainfo from the client's tracer %q)", i, c, c.token)
				}
				if st.HandleStart.Before(st.Receive) || st.HandleEnd.Before(st.HandleStart) || st.Send.Before(st.HandleEnd) || st.End.Before(st.Send) {
					t.Fatalf("server call %d: times out of order: %+v", i, st)
				}
				if st.RequestSize <= 0 {
					t.Fatalf("server call %d: request size %d", i, st.RequestSize)
				}
				if !strings.Contains(st.Begin.String(), " m=") {
					t.Fatalf("server call %d: Begin %v has no monotonic reading: its latency is measured by the wall clock", i, st.Begin)
				}
				if st.Error != nil {
					srvErr++
					if !strings.Contains(st.Error.Error(), "plain failure") {
						t.Fatalf("server error %v", st.Error)
					}
				} else if st.ResponseSize <= 0 {
					t.Fatalf("server call %d: response size %d", i, st.ResponseSize)
				}
			}
			if srvErr != 1 {
				t.Fatalf("server traced %d failed calls, want 1", srvErr)
			}
		})
	}
}

// TestTracerRejected: a request refused by a limit is traced by the client
// (with its Overloaded error), not by the server.
func TestTracerRejected(t *testing.T) {
	srvT := new(recordingTracer)
	_, _, addr := startServer(t, server.WithTracer(srvT), server.WithMaxQPS(1))
	cliT := new(recordingTracer)
	cli, err := echotest.NewEchoClient("Echo", client.WithHostPorts(addr), client.WithTracer(cliT))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	cli.Echo(context.Background(), &echotest.Request{Action: "echo"})
	_, err = cli.Echo(context.Background(), &echotest.Request{Action: "echo"})
	if rpcerr.CodeOf(err) != rpcerr.Overloaded {
		t.Fatalf("second call: %v", err)
	}
	cs := cliT.take()
	if len(cs) != 2 || rpcerr.CodeOf(cs[1].st.Error) != rpcerr.Overloaded {
		t.Fatalf("client traced %d calls: %+v", len(cs), cs)
	}
	time.Sleep(10 * time.Millisecond)
	if ss := srvT.take(); len(ss) != 1 {
		t.Fatalf("server traced %d calls, want 1", len(ss))
	}
}

// noopTracer does nothing: the cost it shows is the hooks' own.
type noopTracer struct{}

func (noopTracer) Start(ctx context.Context) context.Context { return ctx }
func (noopTracer) Finish(context.Context, *stats.Stats)      {}

// BenchmarkTracer measures a call over a multiplexed connection without a
// tracer (the path every untraced call takes) and with a tracer that does
// nothing, on both the client and the server.
func BenchmarkTracer(b *testing.B) {
	for _, bc := range []struct {
		name string
		tr   stats.Tracer
	}{{"none", nil}, {"noop", noopTracer{}}} {
		b.Run(bc.name, func(b *testing.B) {
			var sopts []server.Option
			copts := []client.Option{client.WithMuxConnection(1)}
			if bc.tr != nil {
				sopts = append(sopts, server.WithTracer(bc.tr))
				copts = append(copts, client.WithTracer(bc.tr))
			}
			_, _, addr := startServer(b, sopts...)
			cli, err := echotest.NewEchoClient("Echo", append(copts, client.WithHostPorts(addr))...)
			if err != nil {
				b.Fatal(err)
			}
			defer cli.Close()
			req := &echotest.Request{Action: "echo", Msg: "bench"}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := cli.Echo(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// panickyTracer panics in Start, as a tracer with a bug would.
type panickyTracer struct{ finished chan error }

func (panickyTracer) Start(context.Context) context.Context { panic("tracer bug") }
func (p panickyTracer) Finish(_ context.Context, st *stats.Stats) {
	p.finished <- st.Error
}

// TestTracerStartPanics: a server tracer whose Start panics answers each
// call with an Internal error naming the panic, gives the call's in-flight
// place back (a limit of one still admits the next call) and still runs
// Finish.
func TestTracerStartPanics(t *testing.T) {
	tr := panickyTracer{finished: make(chan error, 4)}
	_, _, addr := startServer(t, server.WithTracer(tr), server.WithMaxInFlight(1))
	cli, err := echotest.NewEchoClient("Echo", client.WithHostPorts(addr), client.WithRPCTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for i := range 3 {
		_, err := cli.Echo(context.Background(), &echotest.Request{Action: "echo"})
		var ae *thrift.ApplicationException
		if !errors.As(err, &ae) || ae.Type != thrift.ExceptionInternalError || !strings.Contains(ae.Message, "tracer bug") {
			t.Fatalf("call %d: %v, want an INTERNAL_ERROR exception naming the tracer's panic", i, err)
		}
		// Finish runs after the reply is written: wait for it.
		if ferr := <-tr.finished; ferr == nil {
			t.Fatalf("call %d: Finish got no error", i)
		}
	}
}

// finishPanics is a tracer whose Finish panics, as a tracer with a bug would.
type finishPanics struct{}

func (finishPanics) Start(ctx context.Context) context.Context { return ctx }
func (finishPanics) Finish(context.Context, *stats.Stats)      { panic("tracer bug in Finish") }

// TestTracerFinishPanics: a server tracer whose Finish panics loses no
// reply and no connection, whatever the protocol (Framed and Buffered
// replies are flushed after Finish, by the connection's reader).
func TestTracerFinishPanics(t *testing.T) {
	s, _, addr := startServer(t, server.WithTracer(finishPanics{}))
	for _, p := range protocols {
		c := dial(t, addr, p)
		c.conn.SetReadTimeout(2 * time.Second)
		for i, msg := range []string{"one", "two"} {
			if res, _ := c.call(int32(i), "echo", msg, nil); res.Success.GetMsg() != msg {
				t.Fatalf("%v, call %d: %+v", p, i, res)
			}
		}
	}
	if n := s.Stats().InFlight; n != 0 {
		t.Fatalf("%d requests in flight after the replies", n)
	}
}
