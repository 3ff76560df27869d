// Package rpcinfo describes the RPC call in progress: who calls whom, which
// method, with which sequence id, timeout and protocol. Middleware and
// handlers reach it with [FromContext].
//
// # Lifetime
//
// An [RPCInfo] is filled in by the client or the server before the call's
// middleware runs and is read-only from then on, but for the fields that
// belong to one attempt of a client call: the client sets SeqID,
// LocalAddr and RemoteAddr inside the middleware's next (each attempt
// takes a new sequence id and may go to another server), so a middleware
// reads them on the goroutine that calls next, or on another only once
// next has returned (never while it runs). Where it comes from a pool
// ([Get]/[Put]) it is valid only until the call returns: code that keeps
// information past the call must copy the fields it needs. The server keeps
// the RPCInfo inside the per-call context it gives the handler, so there it
// stays valid as long as that context is referenced.
package rpcinfo

import (
	"context"
	"net"
	"sync"
	"time"
)

// RPCInfo is what Petrel knows about one call.
type RPCInfo struct {
	// Caller is the calling service's name, when the protocol says it
	// (TTHeader), else "".
	Caller string
	// Callee is the called service's name.
	Callee string
	// Method is the method name as it appears on the wire.
	Method string
	// SeqID is the Thrift message sequence id.
	SeqID int32
	// Timeout is the call's RPC timeout: the client's, or on the server the
	// one the client sent (TTHeader); 0 when none.
	Timeout time.Duration
	// Protocol names the transport protocol ("ttheader", "framed",
	// "buffered").
	Protocol string
	// LocalAddr and RemoteAddr are the connection's addresses (nil when not
	// known).
	LocalAddr  net.Addr
	RemoteAddr net.Addr
}

// Reset clears every field.
func (ri *RPCInfo) Reset() { *ri = RPCInfo{} }

var pool = sync.Pool{New: func() any { return new(RPCInfo) }}

// Get returns a cleared RPCInfo from a pool.
func Get() *RPCInfo { return pool.Get().(*RPCInfo) }

// Put clears ri and returns it to the pool; ri must not be used afterwards,
// nor any context that carries it. Put(nil) does nothing.
func Put(ri *RPCInfo) {
	if ri == nil {
		return
	}
	ri.Reset()
	pool.Put(ri)
}

type ctxKey struct{}

// ContextKey returns the key under which a context carries the *RPCInfo. A
// context type that holds an RPCInfo itself (as the server's per-call context
// does, to save an allocation) answers Value(ContextKey()) with it.
func ContextKey() any { return ctxKey{} }

// NewContext returns a context that carries ri.
func NewContext(ctx context.Context, ri *RPCInfo) context.Context {
	return context.WithValue(ctx, ctxKey{}, ri)
}

// FromContext returns the RPCInfo of the call ctx belongs to, or nil.
func FromContext(ctx context.Context) *RPCInfo {
	ri, _ := ctx.Value(ctxKey{}).(*RPCInfo)
	return ri
}
