package client

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/stats"
	"github.com/petrel-rpc/petrel/transport"
)

// callState is the per-call state, taken from a pool so that a call in the
// steady state allocates nothing of its own. It is also the context the
// middleware and the call path see: it wraps the caller's context and
// answers rpcinfo.FromContext with its RPCInfo (no context.WithValue
// allocation). Like the RPCInfo, it is valid only until Call returns.
type callState struct {
	// parent is the caller's context. The callState is itself the context
	// the middleware sees, and it is pooled: a middleware may keep a context
	// derived from it (context.WithTimeout starts a goroutine that calls Err
	// later), so the context methods load parent atomically and, once the
	// state is recycled, answer as a canceled context: the call is over.
	parent atomic.Pointer[context.Context]

	ri       rpcinfo.RPCInfo
	oneway   bool
	deadline time.Time // zero: none
	// ctxDeadline: deadline is the caller's context's, earlier than the
	// one the call's timeout sets (timeoutError says which passed).
	ctxDeadline bool
	// dl is deadline for Deadline, which a context kept past the call may
	// call while the state serves the next one (UnixNano; 0: none).
	dl atomic.Int64
	cc callConfig

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

func getCallState(ctx context.Context) *callState {
	cs := callStates.Get().(*callState)
	cs.parent.Store(&ctx)
	return cs
}

func putCallState(cs *callState) {
	cs.parent.Store(nil)
	cs.ri.Reset()
	cs.oneway = false
	cs.seqUsed = false
	cs.deadline, cs.ctxDeadline = time.Time{}, false
	cs.dl.Store(0)
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

// Value answers rpcinfo's key with the call's RPCInfo.
func (cs *callState) Value(key any) any {
	switch key {
	case rpcinfo.ContextKey():
		return &cs.ri
	case callStateKey{}:
		return cs
	}
	return cs.ctx().Value(key)
}

// ctx returns the caller's context, or a canceled one once the state is
// recycled.
func (cs *callState) ctx() context.Context {
	if p := cs.parent.Load(); p != nil {
		return *p
	}
	return callOver
}

// callOver is what a context kept past its call sees: canceled.
var callOver = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// setDeadline sets the call's deadline (zero: none).
func (cs *callState) setDeadline(d time.Time) {
	cs.deadline = d
	if d.IsZero() {
		cs.dl.Store(0)
	} else {
		cs.dl.Store(d.UnixNano())
	}
}

// Deadline is the call's: the earlier of the caller's context's and the
// one its timeout sets, so that a middleware (the retry middleware above
// all) sees the time the call has left. Done and Err are the caller's
// context's: the client enforces the timeout itself.
func (cs *callState) Deadline() (time.Time, bool) {
	if n := cs.dl.Load(); n != 0 && cs.parent.Load() != nil {
		return time.Unix(0, n), true
	}
	return cs.ctx().Deadline()
}
func (cs *callState) Done() <-chan struct{} { return cs.ctx().Done() }
func (cs *callState) Err() error            { return cs.ctx().Err() }

// stateOf finds the call's state in ctx (the callState itself, or a context
// a middleware derived from it).
func stateOf(ctx context.Context) *callState {
	if cs, ok := ctx.(*callState); ok {
		return cs
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
