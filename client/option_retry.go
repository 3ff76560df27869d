package client

import (
	"context"
	"errors"
	"net"
	"reflect"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/retry"
)

// govConfig is what the governance options set (retry, circuit breakers).
type govConfig struct {
	retryer   *retry.Retryer      // WithRetry; nil: none
	breakers  *circuitbreak.Group // WithCircuitBreaker; nil: none
	fallback  circuitbreak.Fallback
	instances *circuitbreak.Group // WithInstanceBreaker; nil: none
}

// govState is a call's governance state, part of its callState.
type govState struct {
	argsDone chan struct{}         // closed once a forked attempt no longer reads the request; nil otherwise
	forked   bool                  // a backup request's attempt: its request may not be read once argsDone is closed
	breaker  *circuitbreak.Breaker // the picked instance's breaker; nil: none
	ticket   circuitbreak.Ticket   // the call's admission by that breaker (a late probe's outcome is ignored)
}

// requestWritten tells a backup-request middleware waiting on a forked
// attempt that the attempt no longer reads the request.
func (g *govState) requestWritten() {
	if g.argsDone != nil {
		close(g.argsDone)
		g.argsDone = nil
	}
}

// WithRetry retries failed calls and sends backup requests as r's
// per-method policies say (see package retry), within r's budget. Default:
// no retries. The retry middleware goes inside those of WithMiddleware
// (they see one call) and outside the service-level circuit breaker
// (WithCircuitBreaker sees every attempt).
//
// The client tells r which failures provably did not send the request (no
// address, a failed dial, an encoding error: retry.NotSent is true for
// them); only those, and refusals by the server, are retried for a method
// not marked Idempotent. A oneway call, which gets no reply, is retried
// only when its request was not sent, and never sends backup requests,
// whatever its method's policy (retry.Retryer.MiddlewareOneway).
//
// Every attempt is sent with a sequence id of its own, so that a late
// reply to an attempt that timed out is not taken for a retry's reply.
// Each attempt of a backup-request call runs with a call state and a result
// value of its own (the result type must be a pointer to a struct, as
// generated results are) in a context derived from the one the retry
// middleware got, so that it sends the metainfo the tracer and the
// middleware outside added; the winner's result, addresses and tracer
// timings become the call's (when every attempt failed, those of the
// attempt whose error Call returns: a request sent is reported so).
func WithRetry(r *retry.Retryer) Option {
	return optionFunc(func(c *config) {
		if r == nil {
			c.fail(errors.New("client: WithRetry got a nil Retryer"))
			return
		}
		c.gov.retryer = r
	})
}

// governance returns the middleware the governance options install, inside
// the user's middleware, outermost first.
func (c *Client) governance() []endpoint.Middleware {
	var mws []endpoint.Middleware
	if r := c.cfg.gov.retryer; r != nil {
		mws = append(mws, r.MiddlewareOneway(c.fork, isOneway))
	}
	if g := c.cfg.gov.breakers; g != nil {
		mws = append(mws, g.Middleware(c.cfg.gov.fallback))
	}
	return mws
}

// isOneway reports whether ctx is the context of a call of a oneway method
// (for the retry middleware, which retries such a call only when its
// request was not sent).
func isOneway(ctx context.Context) bool {
	cs := stateOf(ctx)
	return cs != nil && cs.oneway
}

// fork makes an attempt of a backup-request call (retry.Fork): a call
// state of its own, with the call's rpcinfo, deadline and a new sequence
// id, and a new result value of resp's type. Its context is a cancelable
// child of ctx, the one the retry middleware got, so that the attempt
// sends the metainfo the tracer and the middleware outside added, and
// keeps their deadlines. The retry middleware cancels every attempt before
// the call returns, so nothing stays registered on the call's context.
// The winner's addresses, sequence id and tracer timings become the
// call's: done(true) is given the attempt whose outcome, reply or error,
// the call returns (retry.Fork).
func (c *Client) fork(ctx context.Context, resp any) (context.Context, any, <-chan struct{}, context.CancelFunc, func(bool)) {
	parent := stateOf(ctx)
	if parent == nil {
		return nil, nil, nil, nil, nil
	}
	var aresp any
	var rv reflect.Value
	if resp != nil {
		rv = reflect.ValueOf(resp)
		if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
			return nil, nil, nil, nil, nil
		}
		aresp = reflect.New(rv.Type().Elem()).Interface()
	}
	base, cancel := context.WithCancel(ctx)
	cs := getCallState(base)
	cs.ri = parent.ri
	cs.ri.SeqID = c.seq.Add(1)
	cs.oneway, cs.cc = parent.oneway, parent.cc
	// The attempt's context is its own: its Deadline is the attempt's, and
	// must be the earlier of the call's and that of ctx (a middleware
	// outside the retry middleware may have set one), which the attempt
	// then sends as its TTHeader timeout.
	if d, ok := ctx.Deadline(); ok && (parent.deadline.IsZero() || d.Before(parent.deadline)) {
		cs.setDeadline(d)
		cs.mwDeadline = true
	} else {
		cs.setDeadline(parent.deadline)
		cs.ctxDeadline, cs.mwDeadline = parent.ctxDeadline, parent.mwDeadline
	}
	cs.tracing = parent.tracing
	sent := make(chan struct{})
	cs.gov.argsDone, cs.gov.forked = sent, true
	done := func(won bool) {
		if won {
			if aresp != nil {
				rv.Elem().Set(reflect.ValueOf(aresp).Elem())
			}
			parent.ri.SeqID, parent.ri.LocalAddr, parent.ri.RemoteAddr = cs.ri.SeqID, cs.ri.LocalAddr, cs.ri.RemoteAddr
			if cs.tracing {
				parent.st.Send, parent.st.Receive, parent.st.ResponseSize = cs.st.Send, cs.st.Receive, cs.st.ResponseSize
			}
		}
		cs.gov.requestWritten()
		putCallState(cs)
		cancel()
	}
	return cs.c, aresp, sent, cancel, done
}

// notSentError marks a failure that happened before any byte of the
// request was written (retry.NotSent).
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }

func (e *notSentError) Unwrap() error { return e.err }

// RequestNotSent reports true: the request did not leave the client.
func (e *notSentError) RequestNotSent() bool { return true }

// Timeout and Temporary answer as the error it marks does (net.Error), so
// that a timeout before sending is a net.Error, as Call's doc says.
func (e *notSentError) Timeout() bool {
	var ne net.Error
	return errors.As(e.err, &ne) && ne.Timeout()
}

func (e *notSentError) Temporary() bool {
	var ne net.Error
	return errors.As(e.err, &ne) && ne.Temporary()
}

// notSent marks err as a failure before the request was sent.
func notSent(err error) error {
	if err == nil {
		return nil
	}
	return &notSentError{err: err}
}

// outliving returns the context to give code that may keep it after the
// call ends (a dial shared by later calls): the caller's own context
// rather than the call's, whose RPCInfo is gone once Call returns.
func outliving(ctx context.Context) context.Context {
	if cs := stateOf(ctx); cs != nil {
		return cs.c.parent
	}
	return ctx
}
