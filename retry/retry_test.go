package retry_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/internal/steppedclock"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func newRetryer(t testing.TB, cfg retry.Config) *retry.Retryer {
	t.Helper()
	r, err := retry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// noWait makes retries immediate (backoff is tested on its own).
var noWait = retry.Backoff{Base: -1}

var (
	errConn    = rpcerr.New(rpcerr.Connection, "connection reset")
	errTimeout = rpcerr.New(rpcerr.Timeout, "timed out")
	errBiz     = rpcerr.NewBizStatusError(7, "no stock")
)

type notSent struct{ error }

func (notSent) RequestNotSent() bool { return true }
func (e notSent) Unwrap() error      { return e.error }

func withMethod(ctx context.Context, method string) context.Context {
	return rpcinfo.NewContext(ctx, &rpcinfo.RPCInfo{Method: method})
}

func TestIdempotencyRule(t *testing.T) {
	cases := []struct {
		name       string
		idempotent bool
		err        error
		want       int // attempts
	}{
		{"idempotent connection error", true, errConn, 3},
		{"idempotent timeout", true, errTimeout, 3},
		{"non-idempotent connection error after sending", false, errConn, 1},
		{"non-idempotent timeout", false, errTimeout, 1},
		{"non-idempotent, not sent", false, notSent{errConn}, 3},
		{"non-idempotent, server shutting down", false, rpcerr.New(rpcerr.ShuttingDown, "stopping"), 3},
		{"idempotent business status", true, errBiz, 1},
		{"idempotent overloaded (not in the default predicate)", true, rpcerr.New(rpcerr.Overloaded, "busy"), 1},
		{"idempotent application exception", true, rpcerr.New(rpcerr.Application, "x"), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRetryer(t, retry.Config{
				Default: retry.Policy{MaxAttempts: 3, Idempotent: tc.idempotent, Backoff: noWait},
				Budget:  retry.BudgetConfig{Ratio: 1, MinRetries: 100},
			})
			var n int
			ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error {
				n++
				return tc.err
			})
			err := ep(context.Background(), nil, nil)
			if n != tc.want {
				t.Fatalf("attempts = %d, want %d", n, tc.want)
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("error = %v, want %v", err, tc.err)
			}
		})
	}
}

func TestPerMethodPolicyAndMarker(t *testing.T) {
	r := newRetryer(t, retry.Config{
		Default: retry.Policy{MaxAttempts: 1},
		Methods: map[string]retry.Policy{"get": {MaxAttempts: 4, Idempotent: true, Backoff: noWait}},
		Budget:  retry.BudgetConfig{Ratio: 1, MinRetries: 100},
	})
	var marks []string
	ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error {
		v, _ := metainfo.GetValue(ctx, retry.MarkerKey)
		marks = append(marks, v)
		// what a server would receive: only the caller's own transient values
		wire := map[string]string{}
		metainfo.ToWire(ctx, wire)
		if (v != "") != (wire[metainfo.PrefixTransient+retry.MarkerKey] != "") {
			t.Errorf("marker %q not on the wire: %v", v, wire)
		}
		if len(marks) < 3 {
			return errConn
		}
		return nil
	})
	if err := ep(withMethod(context.Background(), "get"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "2", "3"}; len(marks) != 3 || marks[0] != want[0] || marks[1] != want[1] || marks[2] != want[2] {
		t.Fatalf("markers per attempt = %q, want %q", marks, want)
	}
	marks = nil
	if err := ep(withMethod(context.Background(), "put"), nil, nil); err == nil || len(marks) != 1 {
		t.Fatalf("put (default policy, 1 attempt): err %v, attempts %d", err, len(marks))
	}
}

func TestMarkedContextIsNotRetried(t *testing.T) {
	r := newRetryer(t, retry.Config{
		Default: retry.Policy{MaxAttempts: 3, Idempotent: true, Backoff: noWait},
		Budget:  retry.BudgetConfig{Ratio: 1, MinRetries: 100},
	})
	n := 0
	ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error { n++; return errConn })
	// The handler of a retried request: the server put the marker in its
	// context as an upstream value.
	hctx := metainfo.FromWire(context.Background(), map[string]string{metainfo.PrefixTransient + retry.MarkerKey: "2"})
	if !retry.IsRetry(hctx) {
		t.Fatal("IsRetry false for a handler context with the marker")
	}
	ep(hctx, nil, nil)
	if n != 1 {
		t.Fatalf("attempts in a marked context = %d, want 1", n)
	}
	if req, ret := r.Budget().Counts(); req != 0 || ret != 1 {
		t.Fatalf("budget counts = %d requests, %d retries; want 0, 1 (debited)", req, ret)
	}
}

func TestBackoff(t *testing.T) {
	b := retry.Backoff{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, Jitter: 0.5}
	for n, want := range map[int]time.Duration{1: 10, 2: 20, 3: 40, 4: 50, 9: 50} {
		want *= time.Millisecond
		for range 100 {
			d := b.Delay(n)
			if d > want || d < want/2 {
				t.Fatalf("Delay(%d) = %v, want in [%v, %v]", n, d, want/2, want)
			}
		}
	}
	if d := (retry.Backoff{Base: -1}).Delay(3); d != 0 {
		t.Fatalf("negative base: %v", d)
	}
}

// TestBackoffZeroFieldsTakeDefaults: Delay applies the defaults its doc
// promises for zero fields, also on a Backoff that no Retryer filled in,
// and a negative Jitter stays "none" through a Retryer's filling.
func TestBackoffZeroFieldsTakeDefaults(t *testing.T) {
	cases := []struct {
		b        retry.Backoff
		n        int
		min, max time.Duration
	}{
		{retry.Backoff{}, 1, retry.DefaultBackoffBase / 2, retry.DefaultBackoffBase},
		{retry.Backoff{}, 9, retry.DefaultBackoffMax / 2, retry.DefaultBackoffMax},
		{retry.Backoff{Base: 10 * time.Millisecond}, 2, 10 * time.Millisecond, 20 * time.Millisecond},
		{retry.Backoff{Base: time.Millisecond, Max: 4 * time.Millisecond, Jitter: -1}, 5, 4 * time.Millisecond, 4 * time.Millisecond},
	}
	for _, c := range cases {
		for range 100 {
			if d := c.b.Delay(c.n); d < c.min || d > c.max {
				t.Fatalf("%+v.Delay(%d) = %v, want in [%v, %v]", c.b, c.n, d, c.min, c.max)
			}
		}
	}
	r, err := retry.New(retry.Config{Default: retry.Policy{Backoff: retry.Backoff{Base: time.Millisecond, Max: 4 * time.Millisecond, Jitter: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Policy("m").Backoff
	for range 100 {
		if d := b.Delay(5); d != 4*time.Millisecond {
			t.Fatalf("filled %+v.Delay(5) = %v, want 4ms (no jitter)", b, d)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []retry.Config{
		{Default: retry.Policy{MaxAttempts: 11}},
		{Default: retry.Policy{BackupDelay: time.Millisecond}}, // not idempotent
		{Methods: map[string]retry.Policy{"x": {AttemptTimeout: -1}}},
		{Budget: retry.BudgetConfig{Ratio: 2}},
		{Budget: retry.BudgetConfig{Ratio: math.NaN()}},
		{Budget: retry.BudgetConfig{Ratio: math.Inf(1)}},
		{Default: retry.Policy{Backoff: retry.Backoff{Jitter: math.NaN()}}},
		{Methods: map[string]retry.Policy{"x": {Backoff: retry.Backoff{Jitter: 1.5}}}},
		{Budget: retry.BudgetConfig{Window: time.Nanosecond, Buckets: 10}},
		// Buckets left at 0 means DefaultBudgetBuckets: 5ns is too short
		// for them too.
		{Budget: retry.BudgetConfig{Window: 5 * time.Nanosecond}},
	}
	for i, c := range bad {
		if _, err := retry.New(c); err == nil {
			t.Errorf("config %d accepted: %+v", i, c)
		}
	}
	if _, err := retry.NewBudget(retry.BudgetConfig{Window: 5 * time.Nanosecond}); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("NewBudget with a 5ns window and the default buckets: err %v, want one saying the window is too short", err)
	}
	if _, err := retry.New(retry.Config{}); err != nil {
		t.Fatal(err)
	}
}

// TestCanceledBackoffGivesRetryBack: a call canceled while it waits
// before a retry does not spend the retry it never sent.
func TestCanceledBackoffGivesRetryBack(t *testing.T) {
	clk := newClock()
	r := newRetryer(t, retry.Config{
		Default: retry.Policy{MaxAttempts: 2, Idempotent: true, Backoff: retry.Backoff{Base: time.Hour, Max: time.Hour, Jitter: -1}},
		Budget:  retry.BudgetConfig{Ratio: -1, MinRetries: 1, Now: clk.Now},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // cancel once the retry is granted: the call is waiting
		for {
			if _, n := r.Budget().Counts(); n == 1 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var attempts int
	ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error { attempts++; return errConn })
	if err := ep(ctx, nil, nil); !errors.Is(err, errConn) || attempts != 1 {
		t.Fatalf("err %v after %d attempts; want errConn after 1", err, attempts)
	}
	if _, n := r.Budget().Counts(); n != 0 {
		t.Fatalf("%d retries counted after a canceled wait, want 0", n)
	}
}

func TestBudgetWindowSlides(t *testing.T) {
	clk := newClock()
	b, err := retry.NewBudget(retry.BudgetConfig{Ratio: 0.1, Window: time.Second, Buckets: 10, MinRetries: -1, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		b.Request()
	}
	granted := 0
	for range 50 {
		if b.Acquire() {
			granted++
		}
	}
	if granted != 10 {
		t.Fatalf("granted %d retries for 100 requests at 10%%, want 10", granted)
	}
	clk.Advance(1100 * time.Millisecond)
	if req, ret := b.Counts(); req != 0 || ret != 0 {
		t.Fatalf("after the window: %d requests, %d retries", req, ret)
	}
	if b.Acquire() {
		t.Fatal("a retry granted with no requests and MinRetries -1")
	}
}

// hop is a fake service: its handler may call the next hop through its own
// retrying client, with the context a Petrel server would give it.
type hop struct {
	attempts atomic.Int64 // requests this hop's server received
	fail     func() bool  // the server's own failure
	next     endpoint.Endpoint
}

// endpoint is what a client of this hop calls: it carries the caller's
// metainfo to the "server" as TTHeader would and runs the handler.
func (h *hop) endpoint(ctx context.Context, req, resp any) error {
	h.attempts.Add(1)
	wire := map[string]string{}
	metainfo.ToWire(ctx, wire)
	hctx := metainfo.FromWire(context.Background(), wire)
	if h.next != nil {
		if err := h.next(hctx, req, resp); err != nil {
			return err
		}
	}
	if h.fail != nil && h.fail() {
		return errConn
	}
	return nil
}

// amplification runs a steady 1000 requests per second of fake time
// through one hop (a client with budget cfg calling a server that fails
// failPct% of attempts) or two (client A -> service B, whose handler calls
// service C through client B, both clients with budget cfg; C fails), and
// returns the attempts per request of A, after a warm-up, at the first
// server and at the second (0 with one hop).
func amplification(t *testing.T, hops, failPct int, cfg retry.BudgetConfig) (atFirst, atSecond float64) {
	const (
		rate   = 1000 // requests per second of fake time
		warmup = 10 * time.Second
		run    = 30 * time.Second // three windows of the default 10 s
	)
	policy := retry.Policy{MaxAttempts: 3, Idempotent: true, Backoff: noWait}
	clk := newClock()
	cfg.Now = clk.Now
	rng := rand.New(rand.NewPCG(uint64(hops), uint64(failPct)))
	fails := func() bool { return rng.IntN(100) < failPct }
	var first, second *hop
	if hops == 1 {
		first = &hop{fail: fails}
	} else {
		second = &hop{fail: fails}
		rb := newRetryer(t, retry.Config{Default: policy, Budget: cfg})
		first = &hop{next: rb.Middleware(nil)(second.endpoint)}
	}
	ra := newRetryer(t, retry.Config{Default: policy, Budget: cfg})
	ep := ra.Middleware(nil)(first.endpoint)
	var reqs, base1, base2 int64
	for i := 0; time.Duration(i)*time.Second/rate < warmup+run; i++ {
		if time.Duration(i)*time.Second/rate == warmup {
			reqs, base1 = 0, first.attempts.Load()
			if second != nil {
				base2 = second.attempts.Load()
			}
		}
		ep(context.Background(), nil, nil)
		reqs++
		clk.Advance(time.Second / rate)
	}
	atFirst = float64(first.attempts.Load()-base1) / float64(reqs)
	if second != nil {
		atSecond = float64(second.attempts.Load()-base2) / float64(reqs)
	}
	return atFirst, atSecond
}

// TestAmplification is acceptance test 1 on fake endpoints with a fake
// clock: a steady 1000 requests per second, 50% or 100% of attempts
// failing, attempts per request after the first window, over one hop and
// over two (client A -> service B, whose handler calls service C through
// client B, where C fails). The bound is exact: the measured span is three
// whole windows, each budget holds its ratio in every window, and B's
// budget yields to A's retries (debited at B) instead of adding its own.
func TestAmplification(t *testing.T) {
	for _, failPct := range []int{50, 100} {
		t.Run(fmt.Sprintf("one hop %d%%", failPct), func(t *testing.T) {
			amp, _ := amplification(t, 1, failPct, retry.BudgetConfig{})
			t.Logf("one hop, %d%% of attempts failing: %.4f attempts per request", failPct, amp)
			if amp > 1.10 {
				t.Fatalf("%.4f attempts per request, want <= 1.10", amp)
			}
			if amp < 1.05 {
				t.Fatalf("%.4f attempts per request: the budget's retries were not used", amp)
			}
		})
		t.Run(fmt.Sprintf("two hops %d%%", failPct), func(t *testing.T) {
			atB, atC := amplification(t, 2, failPct, retry.BudgetConfig{})
			hop2 := atC / atB
			t.Logf("two hops, %d%% of C's attempts failing: %.4f attempts at B and %.4f at C per request of A; hop 2 alone %.4f attempts per request", failPct, atB, atC, hop2)
			if atB > 1.10 || hop2 > 1.10 || atC > 1.10 {
				t.Fatalf("amplification over 1.10: B %.4f, C %.4f, hop 2 %.4f", atB, atC, hop2)
			}
			if atC < 1.05 {
				t.Fatalf("%.4f attempts at C per request: the budget's retries were not used", atC)
			}
		})
	}
	// The same measure with a budget that does not bound (every attempt may
	// be retried) finds the amplification the bound above rules out.
	unbounded := retry.BudgetConfig{Ratio: 1, MinRetries: math.MaxInt32}
	if amp, _ := amplification(t, 1, 100, unbounded); amp < 2.9 {
		t.Fatalf("without a budget, one hop at 100%% failing: %.4f attempts per request, want 3", amp)
	}
	if _, atC := amplification(t, 2, 100, unbounded); atC < 1.5 {
		t.Fatalf("without a budget, two hops at 100%% failing: %.4f attempts at C per request, want well over 1.10", atC)
	}
}

// TestBudgetYieldsToUpstream: a Debit (a call serving an upstream retry)
// stops the budget's own retries for one window; then they come back.
func TestBudgetYieldsToUpstream(t *testing.T) {
	clk := newClock()
	b, err := retry.NewBudget(retry.BudgetConfig{Ratio: 0.5, Window: time.Second, Buckets: 10, MinRetries: -1, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		b.Request()
	}
	if !b.Acquire() {
		t.Fatal("no retry granted for 100 requests at 50%")
	}
	b.Debit()
	clk.Advance(900 * time.Millisecond)
	for range 100 {
		b.Request()
	}
	if b.Acquire() {
		t.Fatal("a retry granted within the window of an upstream retry")
	}
	if req, ret := b.Counts(); req != 200 || ret != 2 {
		t.Fatalf("counts %d requests %d retries, want 200 2", req, ret)
	}
	clk.Advance(100 * time.Millisecond)
	if !b.Acquire() {
		t.Fatal("no retry granted a window after the last upstream retry")
	}
}

// forkFake makes a fresh result per attempt (a *string) and copies the
// winner's, as the client does.
func forkFake(ctx context.Context, resp any) (context.Context, any, <-chan struct{}, context.CancelFunc, func(bool)) {
	a := new(string)
	actx, cancel := context.WithCancel(ctx)
	return actx, a, nil, cancel, func(won bool) {
		if won {
			*resp.(*string) = *a
		}
		cancel()
	}
}

func TestBackupRequest(t *testing.T) {
	r := newRetryer(t, retry.Config{
		Default: retry.Policy{MaxAttempts: 2, Idempotent: true, BackupDelay: 10 * time.Millisecond},
		Budget:  retry.BudgetConfig{Ratio: 1, MinRetries: 100},
	})
	var mu sync.Mutex
	var canceled []int
	var n atomic.Int32
	ep := r.Middleware(forkFake)(func(ctx context.Context, req, resp any) error {
		i := int(n.Add(1))
		if i == 1 { // the first attempt is slow
			select {
			case <-ctx.Done():
				mu.Lock()
				canceled = append(canceled, i)
				mu.Unlock()
				return ctx.Err()
			case <-time.After(5 * time.Second):
			}
		}
		if !retry.IsRetry(ctx) && i > 1 {
			t.Error("the backup attempt carries no marker")
		}
		*resp.(*string) = "reply"
		return nil
	})
	var out string
	start := time.Now()
	if err := ep(context.Background(), nil, &out); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > time.Second || out != "reply" {
		t.Fatalf("backup call took %v, result %q", el, out)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		c := len(canceled)
		mu.Unlock()
		if c == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the losing attempt was not canceled")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBackupRejectedByBreakerWaits: the service breaker is inside the
// retry middleware (as client.WithCircuitBreaker with WithRetry installs
// it) and half-open. The call's first attempt is the probe; its backup is
// rejected by the breaker. That rejection is no reply: the call waits for
// the probe's and returns it.
func TestBackupRejectedByBreakerWaits(t *testing.T) {
	clk := newClock()
	g, err := circuitbreak.NewGroup(circuitbreak.Config{Now: clk.Now, MinSamples: 1, OpenFor: time.Second, HalfOpenSuccesses: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := g.Get("get")
	p, _ := b.Allow()
	b.Done(p, errConn)
	clk.Advance(time.Second)
	r := newRetryer(t, retry.Config{
		Default: retry.Policy{MaxAttempts: 2, Idempotent: true, BackupDelay: time.Millisecond},
		Budget:  retry.BudgetConfig{Ratio: 1, MinRetries: 100},
	})
	rejected := make(chan struct{})
	var once sync.Once
	spy := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			err := next(ctx, req, resp)
			if errors.Is(err, circuitbreak.ErrOpen) {
				once.Do(func() { close(rejected) })
			}
			return err
		}
	}
	probe := func(ctx context.Context, req, resp any) error {
		select { // the probe answers once the backup was rejected
		case <-rejected:
		case <-ctx.Done():
			return rpcerr.Wrap(rpcerr.Canceled, ctx.Err(), "probe canceled")
		}
		*resp.(*string) = "reply"
		return nil
	}
	ep := r.Middleware(forkFake)(spy(g.Middleware(nil)(probe)))
	var out string
	if err := ep(withMethod(context.Background(), "get"), nil, &out); err != nil || out != "reply" {
		t.Fatalf("call = %v, %q; want the probe's reply", err, out)
	}
	if st := b.State(); st != circuitbreak.Closed {
		t.Fatalf("state %v after the probe's reply, want closed", st)
	}
}

func BenchmarkBudget(b *testing.B) {
	bu, err := retry.NewBudget(retry.BudgetConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bu.Request()
			bu.Acquire()
		}
	})
}

func BenchmarkMiddlewareNoFailure(b *testing.B) {
	r := newRetryer(b, retry.Config{})
	ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error { return nil })
	ctx := withMethod(context.Background(), "get")
	b.ReportAllocs()
	for b.Loop() {
		ep(ctx, nil, nil)
	}
}

// TestBackupEdgeCases: a fast retryable failure launches the next attempt
// after its backoff (milliseconds), not the backup delay; when every attempt fails the last error is returned; a canceled
// call returns at once; the call never returns before a losing attempt has
// written its request.
func TestBackupEdgeCases(t *testing.T) {
	newR := func() *retry.Retryer {
		return newRetryer(t, retry.Config{
			Default: retry.Policy{MaxAttempts: 3, Idempotent: true, BackupDelay: time.Hour},
			Budget:  retry.BudgetConfig{Ratio: 1, MinRetries: 100},
		})
	}
	t.Run("every attempt fails", func(t *testing.T) {
		var n atomic.Int32
		ep := newR().Middleware(forkFake)(func(ctx context.Context, req, resp any) error {
			n.Add(1)
			return errConn
		})
		start := time.Now()
		var out string
		if err := ep(context.Background(), nil, &out); !errors.Is(err, errConn) {
			t.Fatalf("err %v", err)
		}
		if n.Load() != 3 || time.Since(start) > time.Second {
			t.Fatalf("%d attempts in %v; want 3 within the backoffs (the backup delay is an hour)", n.Load(), time.Since(start))
		}
	})
	t.Run("non-retryable reply ends the call", func(t *testing.T) {
		var n atomic.Int32
		ep := newR().Middleware(forkFake)(func(ctx context.Context, req, resp any) error {
			n.Add(1)
			return errBiz
		})
		var out string
		if err := ep(context.Background(), nil, &out); !errors.Is(err, errBiz) || n.Load() != 1 {
			t.Fatalf("err %v after %d attempts", err, n.Load())
		}
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		ep := newR().Middleware(forkFake)(func(actx context.Context, req, resp any) error {
			cancel()
			<-actx.Done()
			return actx.Err()
		})
		var out string
		if err := ep(ctx, nil, &out); rpcerr.CodeOf(err) != rpcerr.Canceled {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("waits for the loser's request", func(t *testing.T) {
		r := newRetryer(t, retry.Config{
			Default: retry.Policy{MaxAttempts: 2, Idempotent: true, BackupDelay: time.Millisecond},
			Budget:  retry.BudgetConfig{Ratio: 1, MinRetries: 100},
		})
		var written atomic.Bool
		var mu sync.Mutex
		forks := 0
		fork := func(ctx context.Context, resp any) (context.Context, any, <-chan struct{}, context.CancelFunc, func(bool)) {
			mu.Lock()
			defer mu.Unlock()
			forks++
			sent := make(chan struct{})
			actx, cancel := context.WithCancel(context.WithValue(ctx, attemptKey{}, attemptInfo{slow: forks == 1, sent: sent}))
			return actx, new(string), sent, cancel, func(bool) { cancel() }
		}
		ep := r.Middleware(fork)(func(ctx context.Context, req, resp any) error {
			info := ctx.Value(attemptKey{}).(attemptInfo)
			if info.slow {
				// This attempt is slow to write its request (still reading
				// req), then waits for its reply until canceled.
				time.Sleep(50 * time.Millisecond)
				written.Store(true)
				close(info.sent)
				<-ctx.Done()
				return ctx.Err()
			}
			close(info.sent)
			return nil
		})
		var out string
		if err := ep(context.Background(), nil, &out); err != nil {
			t.Fatal(err)
		}
		if !written.Load() {
			t.Fatal("the call returned while a losing attempt was still writing its request")
		}
	})
}

type attemptKey struct{}

type attemptInfo struct {
	slow bool
	sent chan struct{}
}

// TestBudgetConcurrentAcquire: goroutines racing for retries get exactly
// the ratio of the requests.
func TestBudgetConcurrentAcquire(t *testing.T) {
	clk := newClock()
	b, err := retry.NewBudget(retry.BudgetConfig{Ratio: 0.1, Window: time.Second, Buckets: 10, MinRetries: -1, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		b.Request()
	}
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if b.Acquire() {
					granted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if granted.Load() != 100 {
		t.Fatalf("granted %d retries for 1000 requests at 10%%, want 100", granted.Load())
	}
}

// TestUnsentAttemptGivesRetryBack: an attempt that failed before its request
// was sent (a breaker rejected a backup, the dial failed) put no load on any
// server, so it gives its retry back to the budget. Before, the budget
// (here one retry per window) was spent on the rejected backup: the hedged
// call got no other backup and waited on its slow first attempt, and the
// failure retry loop counted a retry nobody received.
func TestUnsentAttemptGivesRetryBack(t *testing.T) {
	clk := newClock()
	budget := retry.BudgetConfig{Ratio: -1, MinRetries: 1, Now: clk.Now}
	t.Run("backup", func(t *testing.T) {
		r := newRetryer(t, retry.Config{
			Default: retry.Policy{MaxAttempts: 3, Idempotent: true, BackupDelay: time.Millisecond},
			Budget:  budget,
		})
		var n atomic.Int32
		ep := r.Middleware(forkFake)(func(ctx context.Context, req, resp any) error {
			switch n.Add(1) {
			case 1: // slow
				slow := time.NewTimer(5 * time.Second)
				defer slow.Stop()
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-slow.C:
				}
				*resp.(*string) = "slow"
			case 2: // rejected before sending
				return notSent{circuitbreak.ErrOpen}
			default:
				*resp.(*string) = "backup"
			}
			return nil
		})
		var out string
		if err := ep(context.Background(), nil, &out); err != nil || out != "backup" {
			t.Fatalf("call = %v, %q after %d attempts; want the second backup's reply", err, out, n.Load())
		}
		if _, ret := r.Budget().Counts(); ret != 1 {
			t.Fatalf("%d retries counted, want 1 (the backup that was sent)", ret)
		}
	})
	t.Run("retry", func(t *testing.T) {
		r := newRetryer(t, retry.Config{
			Default: retry.Policy{MaxAttempts: 3, Idempotent: true, Backoff: noWait},
			Budget:  budget,
		})
		var n int
		ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error {
			n++
			if n < 3 {
				return notSent{errConn} // e.g. no connection could be made
			}
			return nil
		})
		if err := ep(context.Background(), nil, nil); err != nil || n != 3 {
			t.Fatalf("call = %v after %d attempts; want success at the third", err, n)
		}
		if _, ret := r.Budget().Counts(); ret != 1 {
			t.Fatalf("%d retries counted, want 1 (the retry that was sent)", ret)
		}
	})
}

// TestExhaustedRetriesSayHowMany: the error of a call whose attempts all
// failed says how many were made, and is still the last attempt's error to
// errors.Is and As, rpcerr.CodeOf, NotSent and net.Error; a call that made
// one attempt returns its error as it came.
func TestExhaustedRetriesSayHowMany(t *testing.T) {
	last := rpcerr.Wrap(rpcerr.Timeout, context.DeadlineExceeded, "the call of get timed out")
	for _, tc := range []struct {
		name   string
		bdelay time.Duration
	}{{"retry", 0}, {"backup", time.Hour}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRetryer(t, retry.Config{Default: retry.Policy{MaxAttempts: 3, Idempotent: true, Backoff: noWait, BackupDelay: tc.bdelay}})
			var n atomic.Int32
			fork := func(ctx context.Context, resp any) (context.Context, any, <-chan struct{}, context.CancelFunc, func(bool)) {
				actx, cancel := context.WithCancel(ctx)
				return actx, resp, nil, cancel, func(bool) {}
			}
			ep := r.Middleware(fork)(func(ctx context.Context, req, resp any) error {
				n.Add(1)
				return notSent{last}
			})
			err := ep(withMethod(context.Background(), "get"), nil, nil)
			if n.Load() != 3 {
				t.Fatalf("%d attempts, want 3", n.Load())
			}
			if err == nil || !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), last.Error()) {
				t.Errorf("error %q does not say it came after 3 attempts, with the last one's text", err)
			}
			var e *rpcerr.Error
			if !errors.As(err, &e) || e != last || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("errors.As/Is do not find the last attempt's error in %v", err)
			}
			if rpcerr.CodeOf(err) != rpcerr.Timeout || !retry.NotSent(err) {
				t.Errorf("code %v, NotSent %v; want timeout, true", rpcerr.CodeOf(err), retry.NotSent(err))
			}
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				t.Errorf("%T is not a net.Error whose Timeout() is true", err)
			}
		})
	}
	r := newRetryer(t, retry.Config{Default: retry.Policy{MaxAttempts: 3, Backoff: noWait}})
	ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error { return errBiz })
	if err := ep(withMethod(context.Background(), "get"), nil, nil); err != error(errBiz) {
		t.Errorf("one attempt: %v, want the attempt's error as it came", err)
	}
}

// TestBudgetWallClockStepsBack: the budget measures its window with the
// monotonic clock. When the wall clock is set back (NTP, an operator),
// requests and retries counted afterwards are still counted and bound the
// retries: the budget neither loses its counts nor grants every retry.
func TestBudgetWallClockStepsBack(t *testing.T) {
	clk := steppedclock.New(t)
	b, err := retry.NewBudget(retry.BudgetConfig{Ratio: 0.1, Window: time.Second, Buckets: 10, MinRetries: -1, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		b.Request()
	}
	clk.Advance(10 * time.Millisecond)
	clk.StepBack(time.Hour)
	for range 100 {
		b.Request()
	}
	granted := 0
	for range 50 {
		if b.Acquire() {
			granted++
		}
	}
	if req, ret := b.Counts(); req != 200 || ret != 20 || granted != 20 {
		t.Errorf("after the wall clock went back 1h: %d retries granted, counts %d requests, %d retries; want 20 granted of 200 requests", granted, req, ret)
	}
	// Debit, then the wall clock goes back again: the budget yields to the
	// upstream for one window, not for the hour the wall clock lost.
	b.Debit()
	clk.StepBack(time.Hour)
	clk.Advance(1100 * time.Millisecond)
	for range 100 {
		b.Request()
	}
	if !b.Acquire() {
		t.Fatal("no retry granted a window after the last Debit, once the wall clock went back")
	}
}
