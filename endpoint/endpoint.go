// Package endpoint defines the shape of one RPC step and of middleware
// around it, shared by the client and the server.
//
// An [Endpoint] handles a call: req is the method's argument struct and resp
// its result struct (generated <Service><Method>Args and ...Result). A
// [Middleware] wraps an Endpoint with behaviour before and after it (logging,
// metrics, deadlines, retries); [Chain] composes several.
package endpoint

import "context"

// Endpoint handles one call: it reads req and fills resp.
type Endpoint func(ctx context.Context, req, resp any) error

// Middleware wraps an Endpoint.
type Middleware func(Endpoint) Endpoint

// Chain returns a Middleware that applies mws in order: mws[0] is outermost,
// so it runs first on the way in and last on the way out. Nil entries are
// skipped; Chain() returns the identity. Chain keeps its own copy of mws:
// changing the caller's slice afterwards does not change the chain.
func Chain(mws ...Middleware) Middleware {
	mws = append([]Middleware(nil), mws...)
	return func(next Endpoint) Endpoint {
		for i := len(mws) - 1; i >= 0; i-- {
			if mws[i] != nil {
				next = mws[i](next)
			}
		}
		return next
	}
}
