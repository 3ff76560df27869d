// Package endpoint defines the shape of one RPC step and of middleware
// around it, shared by the client and the server.
//
// An [Endpoint] handles a call: req is the method's argument struct and resp
// its result struct (generated <Service><Method>Args and ...Result). A
// [Middleware] wraps an Endpoint with behaviour before and after it (logging,
// metrics, deadlines, retries); [Chain] composes several.
package endpoint

import (
	"context"
	"strconv"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// Endpoint handles one call: it reads req and fills resp.
type Endpoint func(ctx context.Context, req, resp any) error

// Middleware wraps an Endpoint.
type Middleware func(Endpoint) Endpoint

// Chain returns a Middleware that applies mws in order: mws[0] is outermost,
// so it runs first on the way in and last on the way out. Nil entries are
// skipped; Chain() returns the identity. Where a middleware returns a nil
// Endpoint, or the chain is applied to one, the chain holds instead an
// Endpoint that fails every call with an [rpcerr.Internal] error saying so
// (rather than panicking when called). Chain keeps its own copy of mws:
// changing the caller's slice afterwards does not change the chain.
func Chain(mws ...Middleware) Middleware {
	mws = append([]Middleware(nil), mws...)
	return func(next Endpoint) Endpoint {
		if next == nil {
			return failing(rpcerr.New(rpcerr.Internal, "endpoint: a chain of "+strconv.Itoa(len(mws))+
				" middleware was applied to a nil Endpoint"))
		}
		for i := len(mws) - 1; i >= 0; i-- {
			if mws[i] != nil {
				if next = mws[i](next); next == nil {
					next = failing(rpcerr.New(rpcerr.Internal, "endpoint: middleware "+strconv.Itoa(i+1)+" of "+
						strconv.Itoa(len(mws))+" given to Chain returned a nil Endpoint"))
				}
			}
		}
		return next
	}
}

// failing returns an Endpoint that fails every call with err: what a chain
// holds in place of a nil Endpoint, which would panic when called.
func failing(err error) Endpoint {
	return func(context.Context, any, any) error { return err }
}
