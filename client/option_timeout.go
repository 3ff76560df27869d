package client

import (
	"errors"
	"fmt"
	"time"
)

// WithMethodTimeout bounds every call of method (the name as in the IDL,
// as passed to Call) by d, in place of the client-wide WithRPCTimeout.
// Default: none; a method without one uses WithRPCTimeout
// (DefaultRPCTimeout, 1s, unless set). d = 0 removes the limit for the
// method: only the context's deadline and WithCallTimeout apply to it.
// Repeated use for the same method keeps the last d.
//
// Precedence: a call's WithCallTimeout over the method's WithMethodTimeout
// over the client's WithRPCTimeout; whichever of them applies, the
// context's deadline still ends the call when it is earlier. As with the
// client-wide timeout, over TTHeader the time remaining is sent to the
// server, which gives its handler that deadline; a retry policy's
// AttemptTimeout (package retry) bounds one attempt within it.
//
// client.New fails on an empty method name or a negative d.
func WithMethodTimeout(method string, d time.Duration) Option {
	return optionFunc(func(c *config) {
		if method == "" {
			c.fail(errors.New("client: WithMethodTimeout got an empty method name"))
			return
		}
		if d < 0 {
			c.fail(fmt.Errorf("client: WithMethodTimeout(%q, %v): negative", method, d))
			return
		}
		if c.methodTimeouts == nil {
			c.methodTimeouts = make(map[string]time.Duration)
		}
		c.methodTimeouts[method] = d
	})
}

// timeoutOf returns the timeout of a call of method without a
// WithCallTimeout: the method's own, else the client-wide one.
func (c *config) timeoutOf(method string) time.Duration {
	if len(c.methodTimeouts) > 0 {
		if d, ok := c.methodTimeouts[method]; ok {
			return d
		}
	}
	return c.rpcTimeout
}
