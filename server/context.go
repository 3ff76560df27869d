package server

import (
	"context"
	"sync"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
)

// callCtx is the context a handler gets. It is one allocation per call that
// holds the call's RPCInfo too; it is not pooled, so a handler may keep it
// (and pass it to goroutines) safely. Like an http.Request's context it is
// canceled when the handler returns, and it expires at the deadline the
// client sent (TTHeader RPC timeout). Its channel and timer are made only
// if Done is called.
type callCtx struct {
	parent   context.Context // never canceled (the server's base context)
	m        *method         // read-only
	ri       rpcinfo.RPCInfo // read-only once the handler runs
	deadline time.Time       // read-only; zero when none

	mu    sync.Mutex    // guards done, timer and err
	done  chan struct{} // made by Done
	timer *time.Timer   // fires at the deadline once Done was called
	err   error         // context.DeadlineExceeded or context.Canceled once ended
}

type callKey struct{}

func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		switch {
		case c.err != nil:
			close(c.done)
		case !c.deadline.IsZero():
			if d := time.Until(c.deadline); d <= 0 {
				c.endLocked(context.DeadlineExceeded)
			} else {
				c.timer = time.AfterFunc(d, c.expire)
			}
		}
	}
	return c.done
}

func (c *callCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
		c.endLocked(context.DeadlineExceeded)
	}
	return c.err
}

func (c *callCtx) Value(key any) any {
	switch key {
	case rpcinfo.ContextKey():
		return &c.ri
	case callKey{}:
		return c
	}
	return c.parent.Value(key)
}

func (c *callCtx) String() string { return "petrel/server.callContext" }

func (c *callCtx) expire() {
	c.mu.Lock()
	c.endLocked(context.DeadlineExceeded)
	c.mu.Unlock()
}

// finish cancels the context when the handler has returned.
func (c *callCtx) finish() {
	c.mu.Lock()
	c.endLocked(context.Canceled)
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.mu.Unlock()
}

func (c *callCtx) endLocked(err error) {
	if c.err == nil {
		c.err = err
		if c.done != nil {
			close(c.done)
		}
	}
}

// callHandler is the innermost endpoint: it calls the generated Handler of
// the method the context belongs to.
func callHandler(ctx context.Context, req, resp any) error {
	c, _ := ctx.Value(callKey{}).(*callCtx)
	if c == nil {
		return rpcerr.New(rpcerr.Internal, "server: a middleware called the handler with a context not derived from the server's")
	}
	args, ok := req.(thrift.FastCodec)
	if !ok {
		return rpcerr.New(rpcerr.Internal, "server: a middleware replaced the request with a value that is not a thrift.FastCodec")
	}
	var result thrift.FastCodec
	if resp != nil {
		if result, ok = resp.(thrift.FastCodec); !ok {
			return rpcerr.New(rpcerr.Internal, "server: a middleware replaced the response with a value that is not a thrift.FastCodec")
		}
	}
	return c.m.info.Handler(ctx, c.m.svc.handler, args, result)
}
