package circuitbreak

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/internal/window"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// State is a breaker's state.
type State int32

const (
	// Closed: calls go through; outcomes are counted.
	Closed State = iota
	// Open: calls are rejected at once until Config.OpenFor has passed.
	Open
	// HalfOpen: one probe call at a time goes through; the others are
	// rejected. Config.HalfOpenSuccesses successful probes in a row close
	// the breaker; a failed probe opens it again; a probe that got no
	// answer (canceled, or never sent) does neither.
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("state(%d)", int32(s))
}

// Defaults of Config.
const (
	DefaultWindow            = time.Second
	DefaultBuckets           = 10
	DefaultErrorRate         = 0.5
	DefaultMinSamples        = 20
	DefaultOpenFor           = 500 * time.Millisecond
	DefaultHalfOpenSuccesses = 3
	DefaultProbeTimeout      = 10 * time.Second
)

// Config configures a [Breaker]. Zero fields take their defaults.
type Config struct {
	// Window is the length of the sliding window over which the error rate
	// is measured (default DefaultWindow, 1s). From a healthy state, a
	// service failing every call trips the breaker after about
	// Window*ErrorRate.
	Window time.Duration
	// Buckets is how many slices the window moves by (default
	// DefaultBuckets, 10).
	Buckets int
	// ErrorRate is the share of counted failures among the window's calls
	// at which the breaker opens (default DefaultErrorRate, 0.5), in (0, 1].
	ErrorRate float64
	// MinSamples is the fewest calls in the window before the error rate is
	// judged (default DefaultMinSamples, 20).
	MinSamples int
	// OpenFor is how long an open breaker rejects every call before it lets
	// a probe through (default DefaultOpenFor, 500ms).
	OpenFor time.Duration
	// HalfOpenSuccesses is how many successful probes in a row close the
	// breaker (default DefaultHalfOpenSuccesses, 3).
	HalfOpenSuccesses int
	// ProbeTimeout is how long a half-open probe holds the probing slot
	// without an outcome (default DefaultProbeTimeout, 10s): after it the
	// next call may probe, so that a probe whose caller never reports
	// (Finish skipped by a panic, say) does not block the breaker for
	// good. Set it above the calls' timeout: one probe then goes at a
	// time. The outcome of a probe that lost its slot so is ignored if it
	// is an answer, but a counted failure still opens a half-open breaker.
	ProbeTimeout time.Duration
	// Counts says which errors count as failures (default
	// [DefaultCounts]). Errors it rejects count as successes: the service
	// answered. The exception is an error Counts rejects that got no
	// answer: of code rpcerr.Canceled, whose request was never sent
	// (rpcerr.NotSent: the error has a RequestNotSent method reporting
	// true), or that its own client ended (rpcerr.Abandoned: a call that
	// the client's Close ended). It counts neither way. In the
	// closed state it is left out of the window (it neither dilutes the
	// error rate nor counts toward MinSamples); a half-open probe ending
	// so neither closes the breaker nor opens it, it only frees the
	// probing slot for the next call.
	Counts func(err error) bool
	// Now is the clock (default time.Now); tests set a fake one. The
	// breaker measures the time between its readings with Time.Sub, which
	// uses the monotonic clock when both readings carry it (time.Now's
	// do): setting the wall clock back or forward moves neither the window
	// nor OpenFor.
	Now func() time.Time
	// OnStateChange, when set, is told each change of state: key is the
	// breaker's key in its [Group] ("" for a breaker made by New). It runs
	// on the goroutine of the call that caused the change, after the
	// breaker's lock is released, so it may read the breaker; it must be
	// quick. Metrics count transitions with it (contrib/metrics'
	// BreakerTransitions). Default: none.
	OnStateChange func(key string, from, to State)
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	c := Config{}
	c.fill()
	return c
}

// Validate reports a configuration that cannot work.
func (c *Config) Validate() error {
	if c.Window < 0 || c.OpenFor < 0 || c.ProbeTimeout < 0 {
		return fmt.Errorf("circuitbreak: Window (%v), OpenFor (%v) and ProbeTimeout (%v) must not be negative", c.Window, c.OpenFor, c.ProbeTimeout)
	}
	if c.Buckets < 0 || c.Buckets > 1000 {
		return fmt.Errorf("circuitbreak: Buckets is %d; it must be 0 (default) to 1000", c.Buckets)
	}
	if !(c.ErrorRate >= 0 && c.ErrorRate <= 1) { // NaN too
		return fmt.Errorf("circuitbreak: ErrorRate is %v; it must be a number in (0, 1] (0: default)", c.ErrorRate)
	}
	if c.MinSamples < 0 || c.HalfOpenSuccesses < 0 {
		return fmt.Errorf("circuitbreak: MinSamples (%d) and HalfOpenSuccesses (%d) must not be negative", c.MinSamples, c.HalfOpenSuccesses)
	}
	w, n := c.Window, c.Buckets
	if w == 0 {
		w = DefaultWindow
	}
	if n == 0 {
		n = DefaultBuckets
	}
	if w/time.Duration(n) <= 0 {
		return fmt.Errorf("circuitbreak: Window %v is too short for %d buckets", w, n)
	}
	return nil
}

func (c *Config) fill() {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Buckets == 0 {
		c.Buckets = DefaultBuckets
	}
	if c.ErrorRate == 0 {
		c.ErrorRate = DefaultErrorRate
	}
	if c.MinSamples == 0 {
		c.MinSamples = DefaultMinSamples
	}
	if c.OpenFor == 0 {
		c.OpenFor = DefaultOpenFor
	}
	if c.ProbeTimeout == 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.HalfOpenSuccesses == 0 {
		c.HalfOpenSuccesses = DefaultHalfOpenSuccesses
	}
	if c.Counts == nil {
		c.Counts = DefaultCounts
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// DefaultCounts is the default failure predicate: every error except those
// that are answers or the caller's own doing: rpcerr codes Business
// (business status), Declared (IDL-declared exceptions) and Canceled, a
// Protocol error whose request was never sent (the client could not encode
// it: a required field missing, say), and an error of a call its own
// client ended (rpcerr.Abandoned: the Connection error of a call in flight
// when the client was closed). A nil error is a success. A canceled call,
// one never sent, or one its client ended, is no success either: it counts
// neither way, in the window or as a half-open probe (see Config.Counts).
func DefaultCounts(err error) bool {
	switch rpcerr.CodeOf(err) {
	case rpcerr.OK, rpcerr.Business, rpcerr.Declared, rpcerr.Canceled:
		return false
	case rpcerr.Protocol:
		return !rpcerr.NotSent(err)
	}
	return !rpcerr.Abandoned(err)
}

// unanswered reports whether err, an error Config.Counts rejected, says
// that no answer came: the call was canceled, its request never sent, or
// its client ended it.
func unanswered(err error) bool {
	return rpcerr.CodeOf(err) == rpcerr.Canceled || rpcerr.NotSent(err) || rpcerr.Abandoned(err)
}

// ErrOpen is the cause of the error a breaker returns when it rejects a
// call. The error itself has code rpcerr.Overloaded (the client sheds the
// call, as an overloaded server would): errors.Is(err, ErrOpen) tells them
// apart. Its message names the breaker's key in its Group (the method, or
// the instance's address) and whether it is open or half-open. It also
// says that the request was not sent (rpcerr.NotSent is true for it), so
// that a rejected backup attempt does not end a call whose other attempt
// is still waiting for its reply.
var ErrOpen = &openError{}

type openError struct{}

func (*openError) Error() string { return "circuit breaker is open" }

// RequestNotSent reports true: a rejected call is not sent (rpcerr.NotSent).
func (*openError) RequestNotSent() bool { return true }

// rejection is the error of a call that breaker key (quoted; "" from New:
// "the breaker") rejects in state: made once per breaker and state, so
// that a rejection allocates nothing.
func rejection(key, state string) *rpcerr.Error {
	who := "the breaker"
	if key != "" {
		who = "breaker " + strconv.Quote(key)
	}
	return rpcerr.Wrap(rpcerr.Overloaded, ErrOpen, "circuitbreak: call rejected by "+who+" ("+state+")")
}

// Stats are a breaker's counters since it was made.
type Stats struct {
	Allowed  int64 // calls let through, probes included
	Rejected int64 // calls rejected
	Probes   int64 // half-open probes let through
	Opened   int64 // times the breaker opened
}

// Breaker is a circuit breaker over a sliding window of call outcomes. Call
// [Breaker.Admit] before a call and [Breaker.Finish] after it (or
// [Breaker.Allow] and [Breaker.Done]). It is safe for concurrent use; in
// the closed state these take no lock and allocate nothing.
type Breaker struct {
	cfg   Config
	key   string        // its key in a Group; "" from New
	state atomic.Int32  // State; written under mu
	win   window.Window // outcomes of the closed state (a: calls, b: failures)
	// base is Config.Now() when the breaker was made; the window counts in
	// nanoseconds since it (Now().Sub(base)): with time.Now, whose readings
	// carry the monotonic clock, a wall clock set back (NTP, an operator)
	// does not move the window back.
	base time.Time

	mu        sync.Mutex
	openedAt  time.Time // when it last opened; guarded by mu
	probing   bool      // a probe is in flight; guarded by mu
	probeAt   time.Time // when that probe went out; guarded by mu
	probeN    uint64    // the number of the latest probe let through; guarded by mu
	successes int       // successful probes in a row; guarded by mu

	allowed, rejected, probes, opened atomic.Int64

	// rejectOpen and rejectProbing are the errors of the calls it rejects
	// open, and half-open with a probe out; they name its key.
	rejectOpen, rejectProbing *rpcerr.Error
}

// New returns a Breaker configured by cfg.
func New(cfg Config) (*Breaker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newKeyed(cfg, ""), nil
}

// newKeyed makes the breaker of key; cfg is valid.
func newKeyed(cfg Config, key string) *Breaker {
	cfg.fill()
	b := &Breaker{
		cfg:           cfg,
		key:           key,
		base:          cfg.Now(),
		rejectOpen:    rejection(key, "open"),
		rejectProbing: rejection(key, "half-open, its probe call not yet ended"),
	}
	b.win.Init(cfg.Window, cfg.Buckets)
	return b
}

// changed tells Config.OnStateChange of a change; b.mu is not held.
func (b *Breaker) changed(from, to State) {
	if f := b.cfg.OnStateChange; f != nil {
		f(b.key, from, to)
	}
}

// State returns the breaker's state. An open breaker whose OpenFor has
// passed reports HalfOpen only once a call asked to go through.
func (b *Breaker) State() State { return State(b.state.Load()) }

// Stats returns the breaker's counters.
func (b *Breaker) Stats() Stats {
	return Stats{Allowed: b.allowed.Load(), Rejected: b.rejected.Load(), Probes: b.probes.Load(), Opened: b.opened.Load()}
}

// Ticket is what [Breaker.Admit] gives a call it lets through, for
// [Breaker.Finish]. A probe's ticket names the probe, so that the outcome
// of a probe that is no longer the breaker's current one is ignored.
type Ticket struct {
	probe uint64 // the probe's number; 0: not a probe
}

// Probe reports whether the call is a half-open probe.
func (t Ticket) Probe() bool { return t.probe != 0 }

// Allow asks to make a call. It returns nil and whether the call is a
// half-open probe, or an error of code rpcerr.Overloaded wrapping
// [ErrOpen]. Every allowed call must be followed by Done with the same
// probe value. Done cannot tell one probe from another: the outcome of a
// late probe (one whose slot was given to another probe after
// Config.ProbeTimeout) counts as the current probe's; [Breaker.Admit] and
// [Breaker.Finish] tell them apart.
func (b *Breaker) Allow() (probe bool, err error) {
	t, err := b.Admit()
	return t.Probe(), err
}

// Admit asks to make a call. It returns the call's ticket, or an error of
// code rpcerr.Overloaded wrapping [ErrOpen]. Every admitted call must be
// followed by Finish with its ticket.
func (b *Breaker) Admit() (Ticket, error) {
	if State(b.state.Load()) == Closed {
		b.allowed.Add(1)
		return Ticket{}, nil
	}
	now := b.cfg.Now()
	halfOpened := false
	b.mu.Lock()
	switch State(b.state.Load()) {
	case Closed:
		b.mu.Unlock()
		b.allowed.Add(1)
		return Ticket{}, nil
	case Open:
		if el := now.Sub(b.openedAt); el < b.cfg.OpenFor {
			if el < 0 {
				// now is before the opening: a clock without a monotonic
				// reading went back (or this call read it just before
				// another opened the breaker). OpenFor counts from now,
				// not from a time the clock may not reach for hours.
				b.openedAt = now
			}
			b.mu.Unlock()
			b.rejected.Add(1)
			return Ticket{}, b.rejectOpen
		}
		b.state.Store(int32(HalfOpen))
		b.successes = 0
		b.probing = false
		halfOpened = true
	}
	// HalfOpen. A probe whose outcome has not come stops blocking the
	// others after ProbeTimeout (see Finish for its outcome if it comes).
	if el := now.Sub(b.probeAt); b.probing && el < b.cfg.ProbeTimeout {
		if el < 0 {
			b.probeAt = now // the clock went back, as for openedAt above
		}
		b.mu.Unlock()
		b.rejected.Add(1)
		return Ticket{}, b.rejectProbing
	}
	b.probeN++
	b.probing, b.probeAt = true, now
	t := Ticket{probe: b.probeN}
	b.mu.Unlock()
	if halfOpened { // (then probing was false: this call is the probe)
		b.changed(Open, HalfOpen)
	}
	b.allowed.Add(1)
	b.probes.Add(1)
	return t, nil
}

// outcome is what a probe's end says of the service.
type outcome int8

const (
	answered       outcome = iota // the service answered
	countedFailure                // a failure Config.Counts counts
	noAnswer                      // no answer came (canceled, not sent): counts neither way
)

// Done records the outcome of a call allowed by Allow. A probe's Done
// while no probe is out (the probe's outcome reported twice) is ignored.
func (b *Breaker) Done(probe bool, err error) {
	if probe {
		b.doneProbe(0, err)
		return
	}
	b.done(err)
}

// Finish records the outcome of a call admitted with t. The outcome of a
// probe that is no longer the current one (another probe took its slot
// after ProbeTimeout, or the breaker opened again since) is ignored unless
// it is a counted failure while the breaker is half-open, which opens it:
// the service failed a call just now, whichever probe it was. A probe's
// outcome reported a second time is ignored.
func (b *Breaker) Finish(t Ticket, err error) {
	if t.probe != 0 {
		b.doneProbe(t.probe, err)
		return
	}
	b.done(err)
}

// done records the outcome of a call that is not a probe.
func (b *Breaker) done(err error) {
	failed := err != nil && b.cfg.Counts(err)
	if State(b.state.Load()) != Closed {
		return // a call let through before the breaker opened
	}
	if err != nil && !failed && unanswered(err) {
		return // no answer came: neither a success nor a failure
	}
	now := b.cfg.Now()
	var fail int64
	if failed {
		fail = 1
	}
	tick := int64(now.Sub(b.base))
	b.win.Add(tick, 1, fail)
	if !failed {
		return
	}
	calls, fails := b.win.Sum(tick)
	if calls < int64(b.cfg.MinSamples) || float64(fails) < b.cfg.ErrorRate*float64(calls) {
		return
	}
	b.mu.Lock()
	opened := State(b.state.Load()) == Closed
	if opened {
		b.openLocked(now)
	}
	b.mu.Unlock()
	if opened {
		b.changed(Closed, Open)
	}
}

// probeOutcome classifies a probe's end; counted is Config.Counts(err).
func probeOutcome(counted bool, err error) outcome {
	switch {
	case counted:
		return countedFailure
	case err != nil && unanswered(err):
		return noAnswer
	}
	return answered
}

// doneProbe records the outcome of probe n (0: whichever is current).
func (b *Breaker) doneProbe(n uint64, err error) {
	out := probeOutcome(err != nil && b.cfg.Counts(err), err)
	b.mu.Lock()
	if n != 0 && n != b.probeN {
		// A late probe: the slot went to another.
		if out == countedFailure && State(b.state.Load()) == HalfOpen {
			b.openLocked(b.cfg.Now())
			b.mu.Unlock()
			b.changed(HalfOpen, Open)
			return
		}
		b.mu.Unlock()
		return
	}
	if !b.probing {
		b.mu.Unlock()
		return // no probe is out: this one was reported already
	}
	b.probing = false
	if State(b.state.Load()) != HalfOpen || out == noAnswer {
		b.mu.Unlock()
		return
	}
	if out == countedFailure {
		b.openLocked(b.cfg.Now())
		b.mu.Unlock()
		b.changed(HalfOpen, Open)
		return
	}
	b.successes++
	closed := b.successes >= b.cfg.HalfOpenSuccesses
	if closed {
		b.win.Reset()
		b.state.Store(int32(Closed))
	}
	b.mu.Unlock()
	if closed {
		b.changed(HalfOpen, Closed)
	}
}

func (b *Breaker) openLocked(now time.Time) {
	b.openedAt = now
	b.probing = false
	b.successes = 0
	b.state.Store(int32(Open))
	b.opened.Add(1)
}
