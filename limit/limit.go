// Package limit holds the admission limits a server applies before it does
// any work for a connection or a request: a bound on open connections, a
// token bucket on requests per second, and a bound on requests in flight.
//
// A rejection is decided at once, with atomic operations (and, for the
// token bucket, one short critical section): nothing waits for capacity.
// The server answers a request rejected by the QPS or in-flight bound with
// an error of code rpcerr.Overloaded, which [Reason.Err] builds; a
// connection over the connection bound it closes unanswered (its client
// sees a Connection error).
//
// The package imports only rpcerr; the server wires it in through
// server.WithMaxConnections, server.WithMaxQPS and server.WithMaxInFlight.
// Other servers (a session library, a gateway) may use [Limiter] directly.
package limit

import (
	"fmt"

	"strconv"
	"sync"
	"sync/atomic"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// Config says which limits apply. Zero fields mean "no limit".
type Config struct {
	// MaxConnections bounds the open connections. 0: no limit.
	MaxConnections int
	// MaxQPS is the token bucket's rate: requests admitted per second.
	// 0: no limit.
	MaxQPS int
	// QPSBurst is the token bucket's size: how many requests may be
	// admitted at once after an idle period. 0: MaxQPS (one second's worth).
	QPSBurst int
	// MaxInFlight bounds the requests admitted and not yet answered.
	// 0: no limit.
	MaxInFlight int
}

// DefaultConfig returns a Config without limits.
func DefaultConfig() Config { return Config{} }

// Validate reports a negative field.
func (c *Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"MaxConnections", c.MaxConnections},
		{"MaxQPS", c.MaxQPS},
		{"QPSBurst", c.QPSBurst},
		{"MaxInFlight", c.MaxInFlight},
	} {
		if f.v < 0 {
			return fmt.Errorf("limit: Config.%s is %d; it must be 0 (no limit) or more", f.name, f.v)
		}
	}
	return nil
}

// Reason says which limit rejected a request or connection.
type Reason uint8

// The reasons; None means admitted.
const (
	None Reason = iota
	Connections
	QPS
	InFlight
)

// String names the reason ("none", "connections", "qps", "in_flight").
func (r Reason) String() string {
	switch r {
	case None:
		return "none"
	case Connections:
		return "connections"
	case QPS:
		return "qps"
	case InFlight:
		return "in_flight"
	}
	return "reason_" + strconv.Itoa(int(r))
}

// Err returns the error a request rejected for r is answered with: code
// rpcerr.Overloaded, and a message naming the limit (n) and the option
// that sets it. Err of None is nil.
func (r Reason) Err(n int) error {
	var what string
	switch r {
	case None:
		return nil
	case Connections:
		what = "more than " + strconv.Itoa(n) + " connections (WithMaxConnections)"
	case QPS:
		what = "more than " + strconv.Itoa(n) + " requests per second (WithMaxQPS)"
	case InFlight:
		what = "more than " + strconv.Itoa(n) + " requests in flight (WithMaxInFlight)"
	default:
		what = r.String()
	}
	return rpcerr.New(rpcerr.Overloaded, "server is overloaded: "+what)
}

// Concurrency counts holders of a bounded resource (connections, requests
// in flight). It counts even without a bound, so that its Load is always
// the number of holders. The zero value has no bound.
type Concurrency struct {
	max int64        // read-only after NewConcurrency; 0: no bound
	n   atomic.Int64 // current holders
}

// NewConcurrency returns a counter bounded by max (0: no bound).
func NewConcurrency(max int) *Concurrency {
	return &Concurrency{max: int64(max)}
}

// TryAcquire takes a place and reports true, or reports false when the
// bound is reached (and takes nothing). A true must be matched by Release.
func (c *Concurrency) TryAcquire() bool {
	if c.max <= 0 {
		c.n.Add(1)
		return true
	}
	// Compare-and-swap, so the count never passes the bound even for an
	// instant (Load is exact).
	for {
		n := c.n.Load()
		if n >= c.max {
			return false
		}
		if c.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives back a place taken by TryAcquire. A Release without a
// matching TryAcquire panics, as sync.WaitGroup does when its counter goes
// negative: a count let below zero would admit more than the bound from
// then on, silently. The count is restored before the panic, so a caller
// that recovers finds it as it was.
func (c *Concurrency) Release() {
	if c.n.Add(-1) < 0 {
		c.n.Add(1)
		panic("limit: Concurrency.Release without a matching TryAcquire")
	}
}

// Load returns the number of places held.
func (c *Concurrency) Load() int64 { return c.n.Load() }

// Max returns the bound (0: none).
func (c *Concurrency) Max() int { return int(c.max) }

// TokenBucket admits up to rate requests per second with bursts of up to
// burst: it holds at most burst tokens, gains rate tokens per second, and
// each admitted request takes one. Times are passed in by the caller, so a
// server that already read the clock does not read it again: nanoseconds
// on a monotonic clock of the caller's (time.Since a fixed time; a wall
// clock may be set back).
type TokenBucket struct {
	mu     sync.Mutex // guards tokens and last
	rate   float64    // tokens per second; read-only
	rateN  int        // rate as given (float64 rounds one past 2^53); read-only
	burst  float64    // read-only
	tokens float64    // guarded by mu
	last   int64      // guarded by mu: the time of the last refill
}

// NewTokenBucket returns a full bucket of burst tokens (burst <= 0: rate)
// refilled at rate tokens per second, starting at now (monotonic
// nanoseconds). rate must be positive.
func NewTokenBucket(rate, burst int, now int64) *TokenBucket {
	if burst <= 0 {
		burst = rate
	}
	return &TokenBucket{rate: float64(rate), rateN: rate, burst: float64(burst), tokens: float64(burst), last: now}
}

// Allow takes a token at time now (monotonic nanoseconds) and reports
// whether there was one. A time earlier than the last one seen adds
// nothing: its caller read the clock before another one did (descheduled
// in between, under load), and the time up to the later reading has been
// counted. (A wall clock was taken here once, and a time far behind the
// last taken for the clock set back and followed: readings from several
// such callers in a row counted the time between them twice, and the rate
// did not hold under overload.)
func (b *TokenBucket) Allow(now int64) bool {
	b.mu.Lock()
	if d := now - b.last; d > 0 {
		b.tokens = min(b.burst, b.tokens+float64(d)*b.rate/1e9)
		b.last = now
	}
	ok := b.tokens >= 1
	if ok {
		b.tokens--
	}
	b.mu.Unlock()
	return ok
}

// Rate returns the bucket's rate in tokens per second.
func (b *TokenBucket) Rate() int { return b.rateN }

// Limiter applies a Config: connections with AcquireConn/ReleaseConn,
// requests with AcquireRequest/ReleaseRequest. It is safe for concurrent
// use, and counts connections and requests in flight even where the Config
// sets no bound.
type Limiter struct {
	cfg      Config               // read-only
	conns    Concurrency          // open connections admitted
	inflight Concurrency          // requests admitted and not yet released
	qps      *TokenBucket         // nil without MaxQPS; read-only pointer
	messages [InFlight + 1]string // Message by Reason; read-only
}

// New returns a Limiter for cfg, starting its token bucket at now
// (monotonic nanoseconds, as AcquireRequest's), or the error of
// cfg.Validate.
func New(cfg Config, now int64) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Limiter{cfg: cfg}
	l.conns.max = int64(cfg.MaxConnections)
	l.inflight.max = int64(cfg.MaxInFlight)
	if cfg.MaxQPS > 0 {
		l.qps = NewTokenBucket(cfg.MaxQPS, cfg.QPSBurst, now)
	}
	for r := Connections; r <= InFlight; r++ {
		l.messages[r] = r.Err(l.Limit(r)).Error()
	}
	return l, nil
}

// Message returns the text of r.Err(l.Limit(r)), made once in New, so
// that answering a rejected request builds nothing; "" for None.
func (l *Limiter) Message(r Reason) string {
	if int(r) < len(l.messages) {
		return l.messages[r]
	}
	return ""
}

// Config returns the limits.
func (l *Limiter) Config() Config { return l.cfg }

// NeedsClock reports whether AcquireRequest reads its now argument (a QPS
// limit is set); without it the caller may pass 0.
func (l *Limiter) NeedsClock() bool { return l.qps != nil }

// AcquireConn admits a connection (true; call ReleaseConn when it closes)
// or rejects it (false) when MaxConnections are open.
func (l *Limiter) AcquireConn() bool { return l.conns.TryAcquire() }

// ReleaseConn records that an admitted connection closed.
func (l *Limiter) ReleaseConn() { l.conns.Release() }

// Connections returns the number of admitted connections open.
func (l *Limiter) Connections() int64 { return l.conns.Load() }

// AcquireRequest admits a request at time now (monotonic nanoseconds, on
// the clock New's now was read from; read only when NeedsClock) and returns None, or returns the Reason it is rejected
// for. An admitted request must be released with ReleaseRequest when it is
// answered. The in-flight bound is checked first, so a request rejected for
// it takes no token.
func (l *Limiter) AcquireRequest(now int64) Reason {
	if !l.inflight.TryAcquire() {
		return InFlight
	}
	if l.qps != nil && !l.qps.Allow(now) {
		l.inflight.Release()
		return QPS
	}
	return None
}

// ReleaseRequest records that an admitted request was answered (or
// dropped).
func (l *Limiter) ReleaseRequest() { l.inflight.Release() }

// InFlight returns the number of admitted requests not yet released.
func (l *Limiter) InFlight() int64 { return l.inflight.Load() }

// Limit returns the configured bound behind r (0 for None or no bound).
func (l *Limiter) Limit(r Reason) int {
	switch r {
	case Connections:
		return l.cfg.MaxConnections
	case QPS:
		return l.cfg.MaxQPS
	case InFlight:
		return l.cfg.MaxInFlight
	}
	return 0
}
