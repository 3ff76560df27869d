package client

import (
	"context"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/stats"
)

// WithTracer makes the client report every call to t: t.Start once the
// call's rpcinfo is filled in, before the middleware (the context it
// returns is the one the middleware sees; metainfo added to it is sent),
// and t.Finish when Call returns, with the call's stats.Stats (Begin, Send
// = request flushed, Receive = reply read, End, payload sizes, the error).
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
	var ctx context.Context = cs
	if tctx := tr.Start(cs); tctx != nil {
		ctx = tctx
	}
	err := c.ep(ctx, args, resp)
	st.End = time.Now()
	st.Error = err
	if args != nil && !st.Send.IsZero() {
		st.RequestSize = args.BLength()
	}
	if result != nil && st.ResponseSize == 0 && !st.Receive.IsZero() && err == nil {
		st.ResponseSize = result.BLength()
	}
	tr.Finish(ctx, st)
	return err
}
