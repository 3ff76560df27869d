package client

import (
	"context"
	"fmt"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/internal/codecsize"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/stats"
)

// WithTracer makes the client report every call to t: t.Start once the
// call's rpcinfo is filled in, before the middleware (the context it
// returns is the one the middleware sees; metainfo added to it is sent),
// and t.Finish when Call returns, with the call's stats.Stats (Begin, Send
// = request flushed, Receive = reply read, End, payload sizes, the error).
// When a middleware panics, Finish gets an rpcerr.Internal error naming the
// panic, and the panic goes on to Call's caller. A call on a closed client
// is reported too (Start, then Finish with the error Call returns), though
// it runs no middleware.
// Use stats.Chain for several tracers; a nil t sets none. Default: none,
// and then the call path does no tracing work.
func WithTracer(t stats.Tracer) Option {
	return optionFunc(func(c *config) { c.tracer = t })
}

// callTraced runs the call between the tracer's hooks.
func (c *Client) callTraced(cs *callState, args, result thrift.FastCodec, resp any) error {
	tr := c.cfg.tracer
	st := &cs.st
	cs.tracing = true
	st.Side = stats.Client
	st.Begin = time.Now()
	var ctx context.Context = cs.c
	if tctx := tr.Start(cs.c); tctx != nil {
		ctx = tctx
	}
	done := false
	defer func() {
		if done {
			return
		}
		// A middleware panicked (or called runtime.Goexit): the tracer
		// still gets its Finish, so that no in-flight count or span is
		// left open, and the panic goes on to the caller.
		r := recover()
		st.End = time.Now()
		st.Error = rpcerr.New(rpcerr.Internal, fmt.Sprintf("client: the call of %s panicked: %v", cs.ri.Method, r))
		if r == nil {
			st.Error = rpcerr.New(rpcerr.Internal, "client: the call of "+cs.ri.Method+" ended its goroutine (runtime.Goexit)")
		}
		tr.Finish(ctx, st)
		if r != nil {
			panic(r)
		}
	}()
	var err error
	if c.closed.Load() {
		// Call left a closed client's call to this check: a metric of
		// failed calls counts it too, as WithTracer says.
		err = errClientClosed
	} else {
		err = c.ep(ctx, args, resp)
	}
	done = true
	st.End = time.Now()
	st.Error = err
	if args != nil && !st.Send.IsZero() {
		st.RequestSize = codecsize.Of(args)
	}
	if result != nil && st.ResponseSize == 0 && !st.Receive.IsZero() && err == nil {
		st.ResponseSize = codecsize.Of(result)
	}
	tr.Finish(ctx, st)
	return err
}
