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
	return chain(list)
}

type chain []Tracer

// Start passes each tracer the context the previous one returned; a nil
// one stands for the context it was given, as the client and server take
// it.
func (c chain) Start(ctx context.Context) context.Context {
	for _, t := range c {
		if next := t.Start(ctx); next != nil {
			ctx = next
		}
	}
	return ctx
}

func (c chain) Finish(ctx context.Context, st *Stats) {
	for i := len(c) - 1; i >= 0; i-- {
		c[i].Finish(ctx, st)
	}
}
