package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
)

// MarkerKey is the transient metainfo key a retried attempt carries (its
// value is the attempt's number, "2" for the first retry). Over TTHeader it
// travels as "RPC_TRANSIT_RetryReq", the key Kitex uses for the same
// purpose. The server puts it in the handler's context, where a client
// called with that context finds it ([IsRetry]) and does not retry again.
const MarkerKey = "RetryReq"

// IsRetry reports whether ctx carries the retry marker: it is the context
// of a retried attempt, or of a handler serving one.
func IsRetry(ctx context.Context) bool {
	_, ok := metainfo.GetValue(ctx, MarkerKey)
	return ok
}

var attemptNames = [maxAttemptsLimit + 1]string{}

func init() {
	for i := range attemptNames {
		attemptNames[i] = strconv.Itoa(i)
	}
}

// WithMarker returns ctx carrying the retry marker of attempt n (n >= 2).
func WithMarker(ctx context.Context, n int) context.Context {
	if n >= 0 && n < len(attemptNames) {
		return metainfo.WithValue(ctx, MarkerKey, attemptNames[n])
	}
	return metainfo.WithValue(ctx, MarkerKey, strconv.Itoa(n))
}

// Config configures a [Retryer]. The zero Config is usable: every method
// gets the zero Policy and the default budget.
type Config struct {
	// Default is the policy of methods not in Methods.
	Default Policy
	// Methods holds per-method policies, by method name (as in the IDL).
	Methods map[string]Policy
	// Budget bounds the retries of all methods together.
	Budget BudgetConfig
}

// Validate reports a configuration that cannot work.
func (c *Config) Validate() error {
	if err := c.Default.Validate(); err != nil {
		return err
	}
	for name, p := range c.Methods {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("method %q: %w", name, err)
		}
	}
	return c.Budget.Validate()
}

// Retryer applies retry policies to the calls of one client. Its
// middleware ([Retryer.Middleware]) goes around each call; the budget is
// shared by every call through it. It is safe for concurrent use.
type Retryer struct {
	def     Policy
	methods map[string]*Policy // read-only after New
	budget  *Budget
	// defOneway and onewayMethods are the policies of oneway calls
	// (onewayPolicy); read-only after New.
	defOneway     Policy
	onewayMethods map[string]*Policy
}

// New returns a Retryer configured by cfg.
func New(cfg Config) (*Retryer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b, err := NewBudget(cfg.Budget)
	if err != nil {
		return nil, err
	}
	r := &Retryer{
		def: cfg.Default, methods: make(map[string]*Policy, len(cfg.Methods)), budget: b,
		onewayMethods: make(map[string]*Policy, len(cfg.Methods)),
	}
	r.def.fill()
	r.defOneway = onewayPolicy(r.def)
	for name, p := range cfg.Methods {
		p.fill()
		r.methods[name] = &p
		o := onewayPolicy(p)
		r.onewayMethods[name] = &o
	}
	return r, nil
}

// onewayPolicy returns p as it applies to a call of a oneway method: such
// a call gets no reply, its attempt ends once its request is written, and
// an error after the write began may come after the server read it whole.
// It is retried only when its request provably was not sent, as for a
// method that is not idempotent, and never sends backup requests: a backup
// would be written while the first attempt's write may still complete.
func onewayPolicy(p Policy) Policy {
	p.Idempotent = false
	p.BackupDelay = 0
	return p
}

// Budget returns the retry budget shared by the Retryer's calls.
func (r *Retryer) Budget() *Budget { return r.budget }

// Policy returns the policy of method, its defaults filled in.
func (r *Retryer) Policy(method string) Policy { return *r.policy(method) }

func (r *Retryer) policy(method string) *Policy {
	if p, ok := r.methods[method]; ok {
		return p
	}
	return &r.def
}

// onewayPolicy returns the policy of a oneway call of ri's method (the
// default's for a nil ri).
func (r *Retryer) onewayPolicy(ri *rpcinfo.RPCInfo) *Policy {
	if ri != nil {
		if p, ok := r.onewayMethods[ri.Method]; ok {
			return p
		}
	}
	return &r.defOneway
}

// Fork prepares an attempt that runs at the same time as others of the same
// call (a backup request): it returns the attempt's context (nil if the call
// cannot be forked: the middleware then retries one attempt at a time), a
// result value of its own for the attempt to decode into, a channel closed
// once the attempt's request is written (nil if the caller cannot tell; the
// middleware then waits for the attempt to end before it returns), cancel,
// which cancels the attempt's context, and done,
// which the middleware calls once the attempt has ended: with won true,
// for the one attempt whose outcome is the call's (the first reply, a
// failure that ends the call, or, when every attempt failed, the attempt
// whose error the call returns), it copies the attempt's result into resp
// (the client also makes the attempt's addresses and tracer timings the
// call's); it then releases what the attempt held. The client supplies it
// (client.WithRetry); without a Fork backup requests are not sent.
type Fork func(ctx context.Context, resp any) (actx context.Context, aresp any, sent <-chan struct{}, cancel context.CancelFunc, done func(won bool))

// Middleware returns the middleware that retries calls by their method's
// policy (the method is rpcinfo.FromContext(ctx).Method). fork makes the
// attempts of backup requests; it may be nil when no policy has a
// BackupDelay. The call's deadline is the earlier of its context's and
// the rpcinfo's Timeout from now (a negative Timeout: spent already, as a
// Petrel client's WithCallTimeout with a negative duration gives); no
// retry is made when it leaves no time for one.
//
// The middleware goes around the endpoint that makes one attempt. Failure
// retries call next again with the same request and result, one at a time;
// a retried attempt's context carries the marker ([WithMarker]). A call
// whose context already carries the marker (made while serving a retried
// request) is never retried: it goes through once and is counted against
// the budget as a retry.
//
// A call whose attempts all failed, more than one, returns the last
// attempt's error wrapped in one that says how many were made ("after 3
// attempts: ..."); errors.Is and As, rpcerr.CodeOf, [NotSent] and net.Error's
// Timeout see it as the last attempt's error.
func (r *Retryer) Middleware(fork Fork) endpoint.Middleware {
	return r.MiddlewareOneway(fork, nil)
}

// MiddlewareOneway is [Retryer.Middleware] for a client that can tell the
// calls of oneway methods: oneway reports, from the context the middleware
// got, whether the call is one (nil: no call is). A oneway call gets no
// reply: its attempt ends once its request is written, and an attempt
// that failed after its write began may have reached the server whole. So
// whatever its policy says, a oneway call is retried only when its request
// provably was not sent ([NotSent]), as for a method that is not
// Idempotent, and it never sends backup requests (a backup would be
// written while the first attempt's write may still complete).
func (r *Retryer) MiddlewareOneway(fork Fork, oneway func(ctx context.Context) bool) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			ri := rpcinfo.FromContext(ctx)
			var p *Policy
			var timeout time.Duration
			if ri != nil {
				p, timeout = r.policy(ri.Method), ri.Timeout
			} else {
				p = &r.def
			}
			if IsRetry(ctx) {
				r.budget.Debit()
				return next(ctx, req, resp)
			}
			r.budget.Request()
			if p.MaxAttempts <= 1 {
				return next(ctx, req, resp)
			}
			if oneway != nil && oneway(ctx) {
				p = r.onewayPolicy(ri)
			}
			var deadline time.Time
			if timeout > 0 {
				deadline = time.Now().Add(timeout)
			} else if timeout < 0 {
				deadline = time.Now() // the call's time is spent already
			}
			if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
				deadline = d
			}
			if p.BackupDelay > 0 && fork != nil {
				return r.hedge(ctx, req, resp, p, deadline, fork, next)
			}
			return r.retry(ctx, req, resp, p, deadline, next)
		}
	}
}

// attemptCtx bounds an attempt by the policy's AttemptTimeout: the
// context's Deadline reports the earlier deadline. Its Done is still the
// call's: the endpoint below (Petrel's client) enforces Deadline itself.
// No context.WithTimeout here: over a context type the context package
// does not know (the client's pooled call state) it would start a goroutine
// that may outlive the call.
func attemptCtx(ctx context.Context, p *Policy) context.Context {
	if p.AttemptTimeout <= 0 {
		return ctx
	}
	d := time.Now().Add(p.AttemptTimeout)
	if old, ok := ctx.Deadline(); ok && old.Before(d) {
		return ctx
	}
	return &deadlineCtx{Context: ctx, deadline: d}
}

// deadlineCtx is a context whose Deadline is earlier than its parent's.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *deadlineCtx) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// attemptsError is the error of a call whose attempts all failed, more
// than one: the last attempt's, saying how many were made. It unwraps to
// that error, so errors.Is and As, rpcerr.CodeOf and [NotSent] see it as
// they would the last attempt's, and it is a net.Error as that is.
type attemptsError struct {
	n    int
	last error
}

func (e *attemptsError) Error() string {
	return "after " + strconv.Itoa(e.n) + " attempts: " + e.last.Error()
}

func (e *attemptsError) Unwrap() error { return e.last }

// Timeout reports whether the last attempt timed out (net.Error).
func (e *attemptsError) Timeout() bool { return rpcerr.CodeOf(e.last) == rpcerr.Timeout }

// Temporary reports whether the last attempt's error is (net.Error).
func (e *attemptsError) Temporary() bool {
	var ne net.Error
	return errors.As(e.last, &ne) && ne.Temporary()
}

var _ net.Error = (*attemptsError)(nil)

// afterAttempts returns err, the error of a call after n attempts, saying
// so when there were several.
func afterAttempts(n int, err error) error {
	if err == nil || n < 2 {
		return err
	}
	return &attemptsError{n: n, last: err}
}

// retry runs failure retries, one attempt at a time.
func (r *Retryer) retry(ctx context.Context, req, resp any, p *Policy, deadline time.Time, next endpoint.Endpoint) error {
	err := next(attemptCtx(ctx, p), req, resp)
	made := 1
	sentErr := sentError(nil, err)
	var timer *time.Timer
	for n := 2; err != nil && n <= p.MaxAttempts; n++ {
		if !p.mayRetry(err) || ctx.Err() != nil {
			break
		}
		wait := p.Backoff.Delay(n - 1)
		if !deadline.IsZero() && time.Until(deadline) <= wait {
			break // no time left for another attempt
		}
		at, ok := r.budget.acquire()
		if !ok {
			break
		}
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				r.budget.release(at) // the retry is not sent
				return afterAttempts(made, err)
			}
		}
		err = next(attemptCtx(WithMarker(ctx, n), p), req, resp)
		made = n
		if err != nil && NotSent(err) {
			r.budget.release(at) // no server saw it
		}
		sentErr = sentError(sentErr, err)
	}
	if timer != nil {
		timer.Stop()
	}
	if err != nil && NotSent(err) && sentErr != nil {
		// The last attempt was not sent, but an earlier one was and may
		// have run: the call must not read as never sent.
		err = sentErr
	}
	return afterAttempts(made, err)
}

// sentError returns err if it is the error of an attempt whose request was
// sent, else prev.
func sentError(prev, err error) error {
	if err != nil && !NotSent(err) {
		return err
	}
	return prev
}

// attempt is one attempt of a backup-request call.
type attempt struct {
	cancel context.CancelFunc
	sent   <-chan struct{}
	ended  chan struct{} // closed when next returned
	done   func(won bool)
	err    error // set before ended is closed
	// budgetAt is when the budget granted this attempt's retry
	// (notBudgeted: the first attempt, or the retry was given back).
	budgetAt int64
}

// notBudgeted is the budgetAt of an attempt that holds no retry of the
// budget. Budget times count from when it was made, so 0 is one of them.
const notBudgeted = math.MinInt64

// hedge runs backup requests: a new attempt whenever BackupDelay passes
// without a reply (or an attempt fails with a retryable error), up to
// MaxAttempts; the first reply wins. An attempt that failed before sending
// its request ([NotSent]) is not a reply: if it may not be retried, the
// call goes on waiting for the attempts still in flight.
func (r *Retryer) hedge(ctx context.Context, req, resp any, p *Policy, deadline time.Time, fork Fork, next endpoint.Endpoint) error {
	results := make(chan *attempt, p.MaxAttempts)
	all := make([]*attempt, 0, p.MaxAttempts)
	launch := func(budgetAt int64) bool {
		n := len(all) + 1
		actx, aresp, sent, cancel, done := fork(ctx, resp)
		if actx == nil {
			return false
		}
		if n > 1 {
			actx = WithMarker(actx, n)
		}
		actx = attemptCtx(actx, p)
		a := &attempt{cancel: cancel, sent: sent, ended: make(chan struct{}), done: done, budgetAt: budgetAt}
		all = append(all, a)
		go func() {
			a.err = next(actx, req, aresp)
			close(a.ended)
			results <- a
		}()
		return true
	}
	// relaunch launches another attempt if one may be launched now. free:
	// it replaces an attempt a server refused as it shuts down, which the
	// client sends elsewhere without the budget when it makes no backup
	// requests (each attempt here is forked, and the client leaves a forked
	// attempt's re-pick to this middleware).
	relaunch := func(free bool) bool {
		if len(all) >= p.MaxAttempts || ctx.Err() != nil {
			return false
		}
		if !deadline.IsZero() && time.Until(deadline) <= 0 {
			return false
		}
		if free {
			return launch(notBudgeted)
		}
		at, ok := r.budget.acquire()
		if !ok {
			return false
		}
		if !launch(at) {
			r.budget.release(at)
			return false
		}
		return true
	}
	if !launch(notBudgeted) {
		return r.retry(ctx, req, resp, p, deadline, next)
	}
	timer := time.NewTimer(p.BackupDelay)
	defer timer.Stop()
	due := time.Now().Add(p.BackupDelay) // when timer fires; zero once it fired
	inflight := 1
	var lastErr error
	// last is the attempt whose error lastErr is. Its done waits for the
	// call's end: when no attempt wins, its outcome is the call's (the
	// request it sent, the address it sent it to).
	var last *attempt
	noWinner := func() error {
		r.settle(all, last, 0, results)
		return afterAttempts(len(all), lastErr)
	}
	for {
		select {
		case a := <-results:
			inflight--
			retryable := a.err != nil && p.mayRetry(a.err)
			// An attempt whose request was never sent (a circuit breaker
			// rejected it, say, while the probe is another attempt) is no
			// reply: while others are in flight the call waits for them.
			unsent := a.err != nil && inflight > 0 && NotSent(a.err)
			if a.budgetAt != notBudgeted && a.err != nil && NotSent(a.err) {
				r.budget.release(a.budgetAt) // no server saw it
				a.budgetAt = notBudgeted
			}
			if a.err == nil || (!retryable && !unsent) {
				win, err := a, a.err
				if err != nil && NotSent(err) && lastErr != nil && !NotSent(lastErr) {
					// An earlier attempt was sent and may have run: its
					// outcome is the call's.
					a.done(false)
					win, err = last, lastErr
				} else if last != nil {
					last.done(false)
				}
				r.settle(all, win, inflight, results)
				return afterAttempts(len(all), err)
			}
			if lastErr == nil || !NotSent(a.err) {
				lastErr = a.err // an error of a sent attempt is kept over one of an unsent one
				if last != nil {
					last.done(false)
				}
				last = a
			} else {
				a.done(false)
			}
			if !retryable {
				continue
			}
			// The attempt after a failure waits its backoff, as failure
			// retries do, unless a backup is due sooner; one a server
			// refused as it shut down goes elsewhere at once.
			free := rpcerr.CodeOf(a.err) == rpcerr.ShuttingDown
			if wait := p.Backoff.Delay(len(all)); !free && wait > 0 && len(all) < p.MaxAttempts {
				now := time.Now()
				if !deadline.IsZero() && deadline.Sub(now) <= wait {
					if inflight == 0 {
						return noWinner() // no time left for another attempt
					}
				} else if due.IsZero() || now.Add(wait).Before(due) {
					timer.Reset(wait)
					due = now.Add(wait)
				}
				continue
			}
			if relaunch(free) {
				inflight++
				timer.Reset(p.BackupDelay)
				due = time.Now().Add(p.BackupDelay)
			} else if inflight == 0 {
				return noWinner()
			}
		case <-timer.C:
			due = time.Time{}
			if relaunch(false) {
				inflight++
				timer.Reset(p.BackupDelay)
				due = time.Now().Add(p.BackupDelay)
			} else if inflight == 0 {
				return noWinner() // after a failure: no budget, attempts or time left
			}
		case <-ctx.Done():
			if last != nil {
				last.done(false)
			}
			r.settle(all, nil, inflight, results)
			return rpcerr.Wrap(rpcerr.CodeOf(ctx.Err()), ctx.Err(), "waiting for the attempts of a backup-request call")
		}
	}
}

// settle ends a backup-request call: the winner, the attempt whose outcome
// is the call's (nil if none), gives its result to the caller; the
// attempts still in flight are canceled, waited for until their requests
// are written (the caller may reuse the request once the call returns),
// and released in the background when they end. Attempts that ended
// before (and whose done was called) are only canceled again.
func (r *Retryer) settle(all []*attempt, winner *attempt, inflight int, results <-chan *attempt) {
	for _, a := range all {
		if a == winner {
			continue
		}
		a.cancel()
		if a.sent != nil {
			select {
			case <-a.sent:
			case <-a.ended:
			}
		} else {
			<-a.ended
		}
	}
	if winner != nil {
		winner.cancel()
		winner.done(true)
	}
	if inflight > 0 {
		go func() {
			for range inflight {
				a := <-results
				if a.budgetAt != notBudgeted && NotSent(a.err) {
					r.budget.release(a.budgetAt)
				}
				a.done(false)
			}
		}()
	}
}
