package client

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// maxBreakerPicks is how many instances a call tries to pick before it
// gives up because their breakers are open.
const maxBreakerPicks = 3

// WithCircuitBreaker installs service-level circuit breakers: one breaker of
// g per method of the service (see circuitbreak.Group.Middleware), inside
// the retry middleware, so that every attempt is counted. A rejected call
// fails at once with an rpcerr.Overloaded error wrapping
// circuitbreak.ErrOpen, or gets fallback's answer (fallback may be nil).
// Default: none.
func WithCircuitBreaker(g *circuitbreak.Group, fallback circuitbreak.Fallback) Option {
	return optionFunc(func(c *config) {
		if g == nil {
			c.fail(errors.New("client: WithCircuitBreaker got a nil Group"))
			return
		}
		c.gov.breakers, c.gov.fallback = g, fallback
	})
}

// WithInstanceBreaker installs instance-level circuit breakers: one breaker
// of g per server address. When the address picked for a call has an open
// breaker the client picks again (up to 3 picks, each breaker asked, and a
// rejection counted, at most once per call); when every pick is open
// the call fails at once with an rpcerr.Overloaded error wrapping
// circuitbreak.ErrOpen, marked as not sent. Every call's outcome is
// recorded in its address's breaker. With WithResolver, the breaker of an
// instance that leaves is removed from g (g.Remove), so g holds at most
// the current instances (plus any key others put in it); if the instance
// comes back its breaker starts closed. Give each client its own g: a
// shared g loses an address's breaker when any of its clients sees it
// leave. Default: none.
func WithInstanceBreaker(g *circuitbreak.Group) Option {
	return optionFunc(func(c *config) {
		if g == nil {
			c.fail(errors.New("client: WithInstanceBreaker got a nil Group"))
			return
		}
		c.gov.instances = g
	})
}

// pick chooses the call's address: the resolver's pick, skipping instances
// whose breaker rejects the call (ctx and deadline: the attempt's).
func (c *Client) pick(ctx context.Context, cs *callState, deadline time.Time) (string, error) {
	addr, err := c.res.pick(ctx, cs, deadline)
	if err == errResolveDeadline {
		return "", rpcerr.Wrap(rpcerr.Timeout, c.timeoutError(cs, deadline, ""), "no address for "+c.service+" (waiting for the first resolution)")
	}
	if err != nil {
		// A timeout or cancellation while waiting for addresses keeps its
		// code; any other failure to find one is a connection error.
		code := rpcerr.Connection
		var re *rpcerr.Error
		if errors.As(err, &re) {
			code = re.Code
		}
		return "", rpcerr.Wrap(code, err, "no address for "+c.service)
	}
	g := c.cfg.gov.instances
	if g == nil {
		return addr, nil
	}
	// Each breaker is asked at most once per call: Admit counts a
	// rejection, and a balancer that gives the same address back (a
	// single instance, a consistent-hash key) would count one call as
	// several. An address picked again is passed over unasked.
	var asked [maxBreakerPicks]string // addresses whose breaker rejected the call
	var rejected error                // the last rejection
	for i, n := 1, 0; ; i++ {
		if !slices.Contains(asked[:n], addr) {
			b := g.Lookup(addr)
			if b == nil {
				if b = c.newInstanceBreaker(g, addr); b == nil {
					return addr, nil // addr just left: no breaker to consult
				}
			}
			ticket, err := b.Admit()
			if err == nil {
				cs.gov.breaker, cs.gov.ticket = b, ticket
				return addr, nil
			}
			asked[n], rejected = addr, err
			n++
		}
		if c.fb != nil {
			c.fb.Done(addr, 0, rejected) // the balancer's pick is not used
		}
		if i == maxBreakerPicks {
			return "", rpcerr.Wrap(rpcerr.Overloaded, rejected, "every instance picked for "+c.service+" has an open circuit breaker (last "+addr+")")
		}
		if addr, err = c.res.pick(ctx, cs, deadline); err != nil {
			return "", rpcerr.Wrap(rpcerr.Connection, err, "no address for "+c.service)
		}
	}
}

// newInstanceBreaker makes addr's breaker in g, unless discovery no longer
// lists addr (nil then).
func (c *Client) newInstanceBreaker(g *circuitbreak.Group, addr string) *circuitbreak.Breaker {
	if d, ok := c.res.(*discoveryResolver); ok {
		return d.breaker(addr)
	}
	return g.Get(addr)
}

// instanceDone records a call's outcome in its instance's breaker.
func (c *Client) instanceDone(cs *callState, err error) {
	if b := cs.gov.breaker; b != nil {
		cs.gov.breaker = nil
		b.Finish(cs.gov.ticket, err)
	}
}
