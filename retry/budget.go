package retry

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/internal/window"
)

// Defaults of BudgetConfig.
const (
	DefaultBudgetRatio   = 0.1
	DefaultBudgetWindow  = 10 * time.Second
	DefaultBudgetBuckets = 10
	DefaultMinRetries    = 3
)

// BudgetConfig configures a [Budget]. Zero fields take their defaults.
type BudgetConfig struct {
	// Ratio is the largest number of retries allowed per original request
	// over the window (default DefaultBudgetRatio, 0.1: at most 10% more
	// attempts than requests). It must be at most 1, and not NaN; a
	// negative value disables retries: MinRetries then defaults to none,
	// and only a MinRetries set explicitly grants retries.
	Ratio float64
	// Window is the length of the sliding window (default
	// DefaultBudgetWindow, 10s).
	Window time.Duration
	// Buckets is how many slices the window moves by (default
	// DefaultBudgetBuckets, 10): the window slides by Window/Buckets.
	Buckets int
	// MinRetries is a number of retries allowed per window whatever the
	// request count, so that a client with little traffic can still retry
	// (default DefaultMinRetries, 3; none when Ratio is negative). A
	// negative value means none.
	MinRetries int
	// Now is the clock (default time.Now); tests set a fake one. The
	// window measures the time between its readings with Time.Sub, which
	// uses the monotonic clock when both readings carry it (time.Now's
	// do): setting the wall clock back or forward does not move the window.
	Now func() time.Time
}

// DefaultBudgetConfig returns the defaults.
func DefaultBudgetConfig() BudgetConfig {
	return BudgetConfig{
		Ratio:      DefaultBudgetRatio,
		Window:     DefaultBudgetWindow,
		Buckets:    DefaultBudgetBuckets,
		MinRetries: DefaultMinRetries,
		Now:        time.Now,
	}
}

// Validate reports a configuration that cannot work.
func (c *BudgetConfig) Validate() error {
	if c.Ratio > 1 || math.IsNaN(c.Ratio) {
		return fmt.Errorf("retry: BudgetConfig.Ratio is %v; it must be a number at most 1 (one retry per request)", c.Ratio)
	}
	if c.Window < 0 {
		return fmt.Errorf("retry: BudgetConfig.Window is %v; it must be 0 (default) or positive", c.Window)
	}
	if c.Buckets < 0 || c.Buckets > 1000 {
		return fmt.Errorf("retry: BudgetConfig.Buckets is %d; it must be 0 (default) to 1000", c.Buckets)
	}
	buckets := c.Buckets
	if buckets == 0 {
		buckets = DefaultBudgetBuckets
	}
	if c.Window > 0 && c.Window/time.Duration(buckets) <= 0 {
		return fmt.Errorf("retry: BudgetConfig.Window %v is too short for %d buckets", c.Window, buckets)
	}
	return nil
}

func (c *BudgetConfig) fill() {
	if c.Ratio == 0 {
		c.Ratio = DefaultBudgetRatio
	}
	if c.Ratio < 0 {
		c.Ratio = 0
	}
	if c.Window == 0 {
		c.Window = DefaultBudgetWindow
	}
	if c.Buckets == 0 {
		c.Buckets = DefaultBudgetBuckets
	}
	if c.MinRetries == 0 && c.Ratio > 0 {
		// A negative Ratio (0 now) disables retries: no default minimum.
		c.MinRetries = DefaultMinRetries
	}
	if c.MinRetries < 0 {
		c.MinRetries = 0
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Budget bounds retries to a share of requests over a sliding window, so
// that retries cannot multiply the load of a failing service: with the
// default ratio of 0.1, the attempts sent are at most 1.1 per request
// whatever fails.
//
// Three things are counted: original requests ([Budget.Request]), retries
// granted ([Budget.Acquire]) and calls made on behalf of a request that is
// itself a retry one hop up ([Budget.Debit]). The last ones count as
// retries: a handler serving a retried request spends this hop's budget,
// so that across two hops the attempts reaching the second server stay
// within the ratio of the first hop's requests.
//
// Retries are made at the outermost hop that retries: while the window
// holds a debited call (within Window of the last Debit) the Budget grants
// no retry of its own. An upstream retry is debited unconditionally (it
// is sent, never refused here), and it comes after this hop's own retries
// of the same request, when the upstream saw them fail; a retry granted
// here in a window where the upstream spends its own budget would pass the
// ratio by that retry. Yielding to the upstream keeps the attempts at the
// next hop within the ratio of the requests in every window in which the
// upstream was already retrying; in the first window of an incident, own
// retries granted before the first upstream retry arrived still count.
//
// A Budget is safe for concurrent use and allocates nothing per call.
// Request and Debit are atomic counts; Acquire tests the bound and counts
// the retry in one step under a short lock (Acquires only): concurrent
// Acquires cannot together pass the ratio.
type Budget struct {
	ratio      float64
	minRetries int64
	window     int64 // the window's length in nanoseconds
	now        func() time.Time
	// base is now() when the budget was made. The window counts in
	// nanoseconds since base (now().Sub(base)): with time.Now, whose
	// readings carry the monotonic clock, a wall clock set back (NTP, an
	// operator) does not move the window back.
	base time.Time
	win  window.Window
	// lastDebit is the time (since base) of the latest Debit, noDebit if
	// none; atomic, it only moves forward.
	lastDebit atomic.Int64
}

// noDebit is lastDebit before the first Debit.
const noDebit = math.MinInt64

// NewBudget returns a Budget configured by cfg.
func NewBudget(cfg BudgetConfig) (*Budget, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.fill()
	b := &Budget{ratio: cfg.Ratio, minRetries: int64(cfg.MinRetries), window: int64(cfg.Window), now: cfg.Now, base: cfg.Now()}
	b.win.Init(cfg.Window, cfg.Buckets)
	b.lastDebit.Store(noDebit)
	return b, nil
}

// tick returns the time of the window: nanoseconds since base, by the
// monotonic clock when the clock's readings carry it.
func (b *Budget) tick() int64 {
	return int64(b.now().Sub(b.base))
}

// Request records an original request (a first attempt).
func (b *Budget) Request() {
	b.win.Add(b.tick(), 1, 0)
}

// Debit records an attempt that counts as a retry without asking: a call
// made while serving a request that was itself a retry. Until Window has
// passed since the latest Debit, Acquire grants nothing.
func (b *Budget) Debit() {
	now := b.tick()
	b.win.Add(now, 0, 1)
	for {
		// lastDebit moves forward only, unless it is a whole window or
		// more ahead of now: a clock without a monotonic reading went
		// back, and the later time may not come for hours.
		last := b.lastDebit.Load()
		if (last >= now && last-now < b.window) || b.lastDebit.CompareAndSwap(last, now) {
			return
		}
	}
}

// Acquire reports whether one more retry fits in the budget, and records it
// when it does.
func (b *Budget) Acquire() bool {
	_, ok := b.acquire()
	return ok
}

// acquire is Acquire; it also returns when the retry was counted, for
// release.
func (b *Budget) acquire() (at int64, ok bool) {
	now := b.tick()
	// A Debit less than a window before now, or after it (another
	// caller's, whose clock read came later), means an upstream hop
	// retries: leave the retries to it. One a whole window or more ahead
	// of now was made before a clock without a monotonic reading went
	// back, and does not count.
	if last := b.lastDebit.Load(); last != noDebit && now-last < b.window && last-now < b.window {
		return 0, false
	}
	return now, b.win.AddBIf(now, b.fits)
}

// release gives back a retry granted at time at that was not sent.
func (b *Budget) release(at int64) {
	b.win.UndoB(at)
}

// fits reports whether one more retry fits with reqs requests and retries
// retries in the window.
func (b *Budget) fits(reqs, retries int64) bool {
	return retries < b.minRetries || float64(retries+1) <= b.ratio*float64(reqs)
}

// Counts returns the requests and retries (granted and debited) in the
// current window.
func (b *Budget) Counts() (requests, retries int64) {
	return b.win.Sum(b.tick())
}
