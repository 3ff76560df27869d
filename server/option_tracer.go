package server

import (
	"context"
	"fmt"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/internal/codecsize"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/stats"
)

// WithTracer makes the server report every request it serves to t:
// t.Start once the call's rpcinfo and the caller's metainfo are in the
// context, before the middleware (the context it returns is the one the
// middleware and handler see), and t.Finish after the reply is written,
// with the call's stats.Stats (Begin = Receive = request read,
// HandleStart/HandleEnd around middleware and handler, Send = reply
// written, sizes, the handler's error). Requests rejected before a handler
// runs (limits, unknown methods, draining) are not traced. Use stats.Chain
// for several tracers; a nil t sets none. A panic in Start answers the
// call with an INTERNAL_ERROR exception, as a handler's panic does; a panic
// in Finish is recovered and counted in Stats().Panics. Default: none, and then the call
// path does no tracing work.
func WithTracer(t stats.Tracer) Option {
	return optionFunc(func(c *config) { c.tracer = t })
}

// serveTraced is serve's handler and reply between the tracer's hooks.
func (c *call) serveTraced(cctx *callCtx, result thrift.FastCodec, flush bool) {
	tr := c.s.cfg.tracer
	st := &c.st // Side, Begin and RequestSize set when the request was read
	st.Receive = st.Begin
	var ctx context.Context = cctx
	err := errGoexit // unless the handler returns (see serve)
	// Deferred before Start, so that a tracer that panics or ends the
	// goroutine still has the request's place given back and its reply sent.
	defer func() {
		st.HandleEnd = time.Now()
		cctx.finish()
		c.s.lim.ReleaseRequest() // the handler is done: its place is free before the reply goes
		st.Error = err
		if !c.oneway {
			c.writeReply(result, err, flush || err == errGoexit)
			st.Send = time.Now()
			if err == nil && result != nil {
				st.ResponseSize = codecsize.Of(result)
			}
		}
		if err == errGoexit && !flush {
			c.cs.answerUnserved(c.m.info.Name, c.seq) // see serve
		}
		st.End = time.Now()
		c.finishTrace(ctx, tr, st, flush || err == errGoexit)
	}()
	ctx, serr := c.startTrace(tr, cctx)
	st.HandleStart = time.Now()
	if serr != nil {
		err = serr
		return
	}
	err = c.invoke(ctx, result) // err stays errGoexit if the handler ends the goroutine
}

// finishTrace calls tr.Finish, counting a panic in it in Stats().Panics:
// on a Framed or Buffered connection the reply written before it waits for
// the reader's flush (flushed false), which the panic would skip, closing
// the connection. A Finish that calls runtime.Goexit ends the reader all
// the same: the reply queued goes out first, and the requests read behind
// it are answered (answerUnserved), as after a handler's Goexit.
func (c *call) finishTrace(ctx context.Context, tr stats.Tracer, st *stats.Stats, flushed bool) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			c.s.stats.panics.Add(1)
		} else if !returned {
			c.s.stats.panics.Add(1)
			if !flushed {
				c.cs.answerUnserved(c.m.info.Name, c.seq)
			}
		}
	}()
	tr.Finish(ctx, st)
	returned = true
}

// startTrace returns the context tr.Start gives for the call (cctx if nil),
// or an Internal error that answers the call if Start panics.
func (c *call) startTrace(tr stats.Tracer, cctx *callCtx) (ctx context.Context, err error) {
	ctx = cctx
	defer func() {
		if r := recover(); r != nil {
			c.s.stats.panics.Add(1)
			ctx, err = cctx, rpcerr.New(rpcerr.Internal, fmt.Sprintf("panic in the server's tracer (Start) for %s.%s: %v", c.m.svc.info.Name, c.m.info.Name, r))
		}
	}()
	if tctx := tr.Start(cctx); tctx != nil {
		ctx = tctx
	}
	return ctx, nil
}
