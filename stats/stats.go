// Package stats lets observers see every RPC call: a [Tracer] is told when a
// call starts and when it finishes, with the call's [Stats] (timestamps of
// sending, receiving and handling, payload sizes, the error).
//
// The client takes a Tracer with client.WithTracer, the server with
// server.WithTracer. Without one, the call paths do no tracing work at all
// (one nil check per call). The call's rpcinfo.RPCInfo (service, method,
// addresses) is reachable from the context with rpcinfo.FromContext in both
// hooks; metainfo set on the client's context in Start travels to the server
// (this is how trace context crosses hops, see contrib/tracing).
//
// This package imports nothing from Petrel; it knows neither the client
// nor the server.
package stats

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Side says which end of a call a Stats describes.
type Side uint8

// The sides.
const (
	Client Side = iota + 1
	Server
)

// String returns "client" or "server".
func (s Side) String() string {
	switch s {
	case Client:
		return "client"
	case Server:
		return "server"
	}
	return "side_" + strconv.Itoa(int(s))
}

// Stats is what one end saw of one call. Times that did not happen (a
// request that failed before it was sent, a oneway call's reply) are zero.
//
// A Stats is owned by the client or server: it is valid only during
// [Tracer.Finish]; a tracer that keeps anything copies it.
type Stats struct {
	// Side is the end that measured.
	Side Side
	// Begin: the client entered Call; the server finished reading the
	// request.
	Begin time.Time
	// Send: the client flushed the request; the server wrote its reply.
	Send time.Time
	// Receive: the client read the reply; the server read the request
	// (equal to Begin).
	Receive time.Time
	// HandleStart and HandleEnd bracket the server's middleware and handler
	// (zero on the client).
	HandleStart time.Time
	HandleEnd   time.Time
	// End: the call returned (client) or its reply was written (server).
	End time.Time
	// RequestSize and ResponseSize are the sizes in bytes of the Thrift
	// message bodies (arguments and result structs, without the framing);
	// 0 when there was none. Where the bytes were not at hand they are the
	// struct's binary-protocol length.
	RequestSize  int
	ResponseSize int
	// Error is the call's outcome (nil on success): on the client what Call
	// returns, on the server what the handler returned.
	Error error
}

// Latency returns End - Begin.
func (s *Stats) Latency() time.Duration { return s.End.Sub(s.Begin) }

// Reset clears every field.
func (s *Stats) Reset() { *s = Stats{} }

// Tracer observes calls. Both methods are called on the call's goroutine
// and must be safe for concurrent use across calls.
//
// Start is called once the call's rpcinfo is filled in, before the
// middleware runs; the context it returns (derived from ctx, or ctx
// itself; nil stands for ctx) is the one the middleware and handler see
// and the one Finish gets. On the client, metainfo added to it is sent
// with the request.
//
// Finish is called when the call is over (on the server after the reply
// was written) with its stats; st is valid only during the call.
type Tracer interface {
	Start(ctx context.Context) context.Context
	Finish(ctx context.Context, st *Stats)
}

// Chain returns a Tracer that calls each of ts: Start in order, Finish in
// reverse order (the first tracer sees the whole of the others). Nil
// entries are skipped; Chain of none (or only nils) returns nil, so that
// passing its result to WithTracer sets no tracer.
//
// Each tracer's Start gets the context the one before it returned, and its
// Finish gets the context its own Start returned (not the last tracer's),
// so that tracers keeping their state under the same context key (two
// OpenTelemetry tracers: the current span) each find their own.
//
// Each tracer gets one Finish for each Start that returned, so that an
// in-flight gauge kept by one of them stays right when another panics:
//   - If a tracer's Start panics, the tracers before it are finished at once
//     (newest first, Stats.Error naming the panic) and the panic goes on;
//     neither it nor the ones after it are finished, and the chain's
//     Finish, if called after such a Start (the server calls it with the
//     context it gave Start), finishes none.
//   - If a tracer's Finish panics, the Finish of the tracers before it
//     still runs, then the panic goes on.
//
// The chain's Finish must be given the context its Start returned (or one
// derived from it), as the client and server do: it finishes the tracers
// only if Start went through to the end.
//
// Cost: a chain's Start allocates one context (112 bytes) holding the
// contexts of up to four tracers, and a slice for them when there are more.
func Chain(ts ...Tracer) Tracer {
	list := make([]Tracer, 0, len(ts))
	for _, t := range ts {
		if t != nil {
			list = append(list, t)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return &chain{list: list}
}

type chain struct{ list []Tracer }

// startedKey is the key under which a chainCtx made by the chain c finds
// itself.
type startedKey struct{ c *chain }

// chainCtx is the context a chain's Start returns: the last tracer's
// context, which also keeps what each tracer's Start returned for its
// Finish.
type chainCtx struct {
	context.Context // the last tracer's; nil until every Start returned
	c               *chain
	ctxs            []context.Context // ctxs[i]: what c.list[i].Start returned (or was given, for nil)
	buf             [4]context.Context
}

// Value returns the chainCtx itself for its startedKey, else what the last
// tracer's context holds.
func (x *chainCtx) Value(key any) any {
	if k, ok := key.(startedKey); ok && k.c == x.c {
		return x
	}
	return x.Context.Value(key)
}

// Start passes each tracer the context the previous one returned; a nil
// one stands for the context it was given, as the client and server take
// it.
func (c *chain) Start(ctx context.Context) context.Context {
	x := &chainCtx{c: c}
	x.ctxs = x.buf[:0]
	if len(c.list) > len(x.buf) {
		x.ctxs = make([]context.Context, 0, len(c.list))
	}
	defer func() {
		i := len(x.ctxs)
		if i == len(c.list) {
			return
		}
		// c.list[i].Start panicked (or ended the goroutine): the call does
		// not go on. The tracers that started finish now.
		r := recover()
		st := &Stats{Error: fmt.Errorf("stats: the call ended in the Start of tracer %d of %d of a Chain (%T): it panicked: %v", i+1, len(c.list), c.list[i], r)}
		if r == nil {
			st.Error = fmt.Errorf("stats: the call ended in the Start of tracer %d of %d of a Chain (%T): it called runtime.Goexit", i+1, len(c.list), c.list[i])
		}
		c.finish(i-1, x, st)
		if r != nil {
			panic(r)
		}
	}()
	for _, t := range c.list {
		if next := t.Start(ctx); next != nil {
			ctx = next
		}
		x.ctxs = append(x.ctxs, ctx)
	}
	x.Context = ctx
	return x
}

// Finish calls each tracer's Finish, last one first, if ctx comes from a
// Start that went through; after a Start that panicked the tracers it
// started were finished already.
func (c *chain) Finish(ctx context.Context, st *Stats) {
	if ctx == nil {
		return
	}
	x, _ := ctx.Value(startedKey{c}).(*chainCtx)
	if x == nil {
		return
	}
	c.finish(len(c.list)-1, x, st)
}

// finish calls Finish of c.list[i] down to c.list[0], each with the
// context its Start returned. If one panics (or ends the goroutine), those
// before it still get their Finish, then the panic goes on.
func (c *chain) finish(i int, x *chainCtx, st *Stats) {
	defer func() {
		if i >= 0 { // c.list[i].Finish did not return
			c.finish(i-1, x, st)
		}
	}()
	for ; i >= 0; i-- {
		c.list[i].Finish(x.ctxs[i], st)
	}
}
