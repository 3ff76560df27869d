package server_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/stats"
	"github.com/petrel-rpc/petrel/transport"
)

// finishGoexits is a tracer whose Finish ends its goroutine (a tracer
// calling t.FailNow, or log.Fatal's cousin runtime.Goexit), as a buggy one may.
type finishGoexits struct{}

func (finishGoexits) Start(ctx context.Context) context.Context { return ctx }
func (finishGoexits) Finish(context.Context, *stats.Stats)      { runtime.Goexit() }

// TestTracerFinishGoexitSendsReply: the handler returned and its reply was
// written, but on a Framed or Buffered connection the reply is only queued
// for the reader to flush after Finish; a Finish that calls runtime.Goexit
// ended the reader, and the queued reply was never sent: the client saw its
// connection closed instead of the answer its handler gave. (A Goexit in
// Start, or in the handler, flushes the reply first; a panic in Finish is
// recovered.)
func TestTracerFinishGoexitSendsReply(t *testing.T) {
	_, _, addr := startServer(t, server.WithTracer(finishGoexits{}))
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered, transport.TTHeader} {
		c := dial(t, addr, p)
		c.conn.SetReadTimeout(2 * time.Second)
		args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "hi"}}
		if err := c.send("echo", thrift.CALL, 1, args, nil); err != nil {
			t.Fatalf("%v: send: %v", p, err)
		}
		res := new(echotest.EchoEchoResult)
		rep, err := c.recv(res)
		if err != nil {
			t.Errorf("%v: the handler answered, but no reply came: %v", p, err)
			continue
		}
		if rep.typ != thrift.REPLY || res.Success.GetMsg() != "hi" {
			t.Errorf("%v: reply %+v %+v", p, rep, res)
		}
	}
}
