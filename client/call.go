package client

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/internal/deadline"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/stats"
	"github.com/petrel-rpc/petrel/transport"
)

// callState is the per-call state, taken from a pool so that a call in the
// steady state allocates nothing but its context (callContext). Like the
// RPCInfo, it is valid only until Call returns.
type callState struct {
	c   *callContext  // the call's context; made for each call, never pooled
	gen atomic.Uint64 // counts the calls the state has served (see callContext.live)

	ri       rpcinfo.RPCInfo
	oneway   bool
	deadline time.Time // zero: none
	// ctxDeadline: deadline is the caller's context's, earlier than the
	// one the call's timeout sets; mwDeadline: a backup request's attempt
	// whose deadline is an outer middleware's context's, earlier than the
	// call's (timeoutError says which passed).
	ctxDeadline, mwDeadline bool
	cc                      callConfig

	// seqUsed: an attempt of the call used ri.SeqID already, so the
	// next attempt (a retry, another instance) takes a new one: a late
	// reply to the earlier attempt must not be taken for its own.
	seqUsed bool

	hdr  transport.Header // request header (maps reused)
	rhdr transport.Header // reply header of the short and long pools

	mc    muxCall     // the multiplexed pool's waiting call
	timer *time.Timer // the multiplexed pool's deadline; stopped between calls

	gov govState // retry and circuit breakers (option_retry.go)

	tracing bool        // a tracer is set (option_tracer.go): the call path fills st
	st      stats.Stats // the call's stats for the tracer
}

// farFuture arms a timer that is stopped at once: it is only Reset per call
// afterwards.
const farFuture = 1<<63 - 1

var callStates = sync.Pool{New: func() any {
	cs := &callState{timer: time.NewTimer(farFuture)}
	cs.timer.Stop()
	cs.mc.ch = make(chan struct{}, 1)
	return cs
}}

// getCallState returns a call state whose context wraps the caller's ctx.
func getCallState(ctx context.Context) *callState {
	cs := callStates.Get().(*callState)
	cs.c = &callContext{parent: ctx, cs: cs, gen: cs.gen.Load()}
	return cs
}

func putCallState(cs *callState) {
	cs.gen.Add(1) // a context kept past the call finds its state gone
	cs.c = nil
	cs.ri.Reset()
	cs.oneway = false
	cs.seqUsed = false
	cs.deadline, cs.ctxDeadline, cs.mwDeadline = time.Time{}, false, false
	cs.cc = callConfig{}
	cs.mc.result = nil
	cs.mc.method = ""
	cs.mc.err = nil
	cs.gov = govState{}
	if cs.tracing {
		cs.tracing = false
		cs.st.Reset()
	}
	callStates.Put(cs)
}

// callStateKey is the context key under which a callState finds itself when
// a middleware wrapped it in another context.
type callStateKey struct{}

// callContext is the context the middleware, the tracer and the call path
// see: it wraps the caller's context and answers rpcinfo.FromContext with
// the call's RPCInfo (no context.WithValue allocation). It is made for each
// call and not pooled, so that a context kept past the call (a middleware's
// context.WithTimeout, whose goroutine may call Err later; a logger's) reads
// that call's caller context for good, never the next call's. Its RPCInfo
// and state are the call's until Call returns, and nil after.
type callContext struct {
	parent context.Context // the caller's
	cs     *callState      // the call's state while the call runs (live)
	gen    uint64          // cs.gen during the call
	dl     int64           // the call's deadline, UnixNano (0: none); set before the context is handed out
}

// live reports whether the call runs: its state has not been put back.
func (c *callContext) live() bool { return c.cs.gen.Load() == c.gen }

// Value answers rpcinfo's key with the call's RPCInfo while the call runs.
func (c *callContext) Value(key any) any {
	switch key {
	case rpcinfo.ContextKey():
		if c.live() {
			return &c.cs.ri
		}
		return nil
	case callStateKey{}:
		if c.live() {
			return c.cs
		}
		return nil
	}
	return c.parent.Value(key)
}

// Deadline is the call's: the earlier of the caller's context's and the
// one its timeout sets, so that a middleware (the retry middleware above
// all) sees the time the call has left. Done and Err are the caller's
// context's: the client enforces the timeout itself.
func (c *callContext) Deadline() (time.Time, bool) {
	if c.dl != 0 {
		return time.Unix(0, c.dl), true
	}
	return c.parent.Deadline()
}
func (c *callContext) Done() <-chan struct{} { return c.parent.Done() }
func (c *callContext) Err() error            { return c.parent.Err() }

// setDeadline sets the call's deadline (zero: none), before its context is
// handed out. The context holds it as UnixNano, which reaches only from 1678
// to 2262: a later deadline (a timeout of math.MaxInt64), in effect none, is
// held as the latest it can hold, not as the overflow's date in the 1700s,
// and an earlier one (long past) as 1970.
func (cs *callState) setDeadline(d time.Time) {
	cs.deadline = d
	cs.c.dl = deadline.UnixNano(d)
}

// stateOf finds the call's state in ctx (the call's context, or a context
// a middleware derived from it); nil once the call is over.
func stateOf(ctx context.Context) *callState {
	if c, ok := ctx.(*callContext); ok {
		if c.live() {
			return c.cs
		}
		return nil
	}
	cs, _ := ctx.Value(callStateKey{}).(*callState)
	return cs
}

// msCache keeps the decimal text of the last timeout sent, so that calls
// with the same remaining milliseconds do not format it again.
type msCache struct {
	p atomic.Pointer[msText]
}

type msText struct {
	ms   int64
	text string
}

func (c *msCache) text(ms int64) string {
	if t := c.p.Load(); t != nil && t.ms == ms {
		return t.text
	}
	t := &msText{ms: ms, text: strconv.FormatInt(ms, 10)}
	c.p.Store(t)
	return t.text
}
