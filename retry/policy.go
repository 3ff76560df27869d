package retry

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// Defaults of Policy and Backoff.
const (
	// DefaultMaxAttempts is the attempts of a call, the first included.
	DefaultMaxAttempts = 2
	// DefaultBackoffBase is the wait before the first retry.
	DefaultBackoffBase = 5 * time.Millisecond
	// DefaultBackoffMax bounds the wait before any retry.
	DefaultBackoffMax = 200 * time.Millisecond
	// DefaultJitter is the share of each wait drawn at random.
	DefaultJitter = 0.5
	// maxAttemptsLimit bounds MaxAttempts.
	maxAttemptsLimit = 10
)

// Policy says how the calls of one method are retried. Zero fields take
// their defaults; the zero Policy retries once, and only failures whose
// request provably did not reach the server's handler.
type Policy struct {
	// MaxAttempts is the number of attempts of a call, the first included
	// (default DefaultMaxAttempts, 2; at most 10). 1 disables retries and
	// backup requests.
	MaxAttempts int
	// Idempotent says that the method may run twice for one call with the
	// same effect as once. Only then is a request that may have reached the
	// server sent again (a timeout, a connection lost after writing, a
	// backup request). A method that is not idempotent is retried only when
	// the request provably was not sent ([NotSent]: no address, a failed
	// dial, an encoding error) or the server refused it before its handler
	// ran (rpcerr.Overloaded, rpcerr.ShuttingDown).
	Idempotent bool
	// RetryOn says which errors are worth another attempt (default
	// [DefaultRetryOn]: rpcerr Connection, Timeout and ShuttingDown). It is
	// asked after the idempotency rule allowed the retry, and never for a
	// final failure ([rpcerr.Final]), which is not retried.
	RetryOn func(err error) bool
	// Backoff is the wait before each retry (defaults in [Backoff]).
	Backoff Backoff
	// AttemptTimeout bounds each attempt (default 0: each attempt has what
	// remains of the call's deadline). A retry after a timeout needs it:
	// without it the first attempt's timeout is the call's.
	AttemptTimeout time.Duration
	// BackupDelay, when positive, turns the policy into backup requests
	// (hedging): when an attempt has not answered after BackupDelay, another
	// is sent, up to MaxAttempts in flight; the first reply wins and the
	// others are canceled. It needs Idempotent.
	BackupDelay time.Duration
}

// Backoff is the wait before retry n (n = 1 for the first retry):
// min(Max, Base * 2^(n-1)), of which a share Jitter is drawn at random
// (the wait is uniform in [d*(1-Jitter), d]). Zero fields take their
// defaults, in Delay too; a Max below Base counts as Base; a negative Base
// means no wait.
type Backoff struct {
	Base   time.Duration // default DefaultBackoffBase (5ms)
	Max    time.Duration // default DefaultBackoffMax (200ms)
	Jitter float64       // at most 1, not NaN; default DefaultJitter (0.5); negative: none
}

// Delay returns the wait before retry n (n >= 1).
func (b Backoff) Delay(n int) time.Duration {
	b.fill()
	if b.Base <= 0 {
		return 0
	}
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		if d > b.Max/2 {
			d = b.Max // doubling would pass Max, or overflow
			break
		}
		d *= 2
	}
	d = min(d, b.Max)
	if b.Jitter > 0 {
		d -= time.Duration(b.Jitter * rand.Float64() * float64(d))
	}
	return d
}

func (b *Backoff) fill() {
	if b.Base == 0 {
		b.Base = DefaultBackoffBase
	}
	if b.Max == 0 {
		b.Max = DefaultBackoffMax
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	// A negative Jitter stays: it means none, and filling again (Delay
	// does) must not make it the default.
	if b.Jitter == 0 {
		b.Jitter = DefaultJitter
	}
}

// Validate reports a policy that cannot work.
func (p *Policy) Validate() error {
	if p.MaxAttempts < 0 || p.MaxAttempts > maxAttemptsLimit {
		return fmt.Errorf("retry: Policy.MaxAttempts is %d; it must be 0 (default) to %d", p.MaxAttempts, maxAttemptsLimit)
	}
	if p.Backoff.Jitter > 1 || math.IsNaN(p.Backoff.Jitter) {
		return fmt.Errorf("retry: Policy.Backoff.Jitter is %v; it must be a number at most 1", p.Backoff.Jitter)
	}
	if p.Backoff.Max < 0 {
		return fmt.Errorf("retry: Policy.Backoff.Max is %v; it must not be negative", p.Backoff.Max)
	}
	if p.AttemptTimeout < 0 {
		return fmt.Errorf("retry: Policy.AttemptTimeout is %v; it must not be negative", p.AttemptTimeout)
	}
	if p.BackupDelay < 0 {
		return fmt.Errorf("retry: Policy.BackupDelay is %v; it must not be negative", p.BackupDelay)
	}
	if p.BackupDelay > 0 && !p.Idempotent {
		return errors.New("retry: Policy.BackupDelay needs Idempotent: a backup request sends the call twice")
	}
	return nil
}

func (p *Policy) fill() {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.RetryOn == nil {
		p.RetryOn = DefaultRetryOn
	}
	p.Backoff.fill()
}

// DefaultRetryOn is the default retryable-error predicate: errors of code
// rpcerr.Connection (dial failed, connection lost), rpcerr.Timeout (the
// attempt's deadline passed; useful with Policy.AttemptTimeout) and
// rpcerr.ShuttingDown (the instance is stopping; another may answer).
//
// rpcerr.Overloaded is left out on purpose: sending more to an overloaded
// service feeds the overload. Business statuses, application exceptions and
// IDL-declared exceptions are answers, never retried by default.
func DefaultRetryOn(err error) bool {
	switch rpcerr.CodeOf(err) {
	case rpcerr.Connection, rpcerr.Timeout, rpcerr.ShuttingDown:
		return true
	}
	return false
}

// NotSent is [rpcerr.NotSent]: failures marked so are retried even for a
// method that is not idempotent.
func NotSent(err error) bool { return rpcerr.NotSent(err) }

// refused reports whether the server answered that it did not run the
// handler.
func refused(err error) bool {
	switch rpcerr.CodeOf(err) {
	case rpcerr.Overloaded, rpcerr.ShuttingDown:
		return true
	}
	return false
}

// mayRetry applies the idempotency rule, then the policy's predicate. A
// final failure ([rpcerr.Final]: the client was closed) is never retried.
func (p *Policy) mayRetry(err error) bool {
	if rpcerr.Final(err) {
		return false
	}
	if !p.Idempotent && !NotSent(err) && !refused(err) {
		return false
	}
	return p.RetryOn(err)
}
