package circuitbreak_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/internal/steppedclock"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
)

type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

var errConn = rpcerr.New(rpcerr.Connection, "connection refused")

func newBreaker(t testing.TB, cfg circuitbreak.Config) *circuitbreak.Breaker {
	t.Helper()
	b, err := circuitbreak.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAcceptance is acceptance test 2 with a fake clock and a fake
// service at a steady 1000 calls per second: healthy for 5 s, failing
// every call for 10 s, healthy again. The breaker (default config) must
// open within 1 s of the failures starting, close within 2 s of the
// recovery, and its half-open probes must be at most 1% of the calls.
func TestAcceptance(t *testing.T) {
	clk := newClock()
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now})
	const step = time.Millisecond // 1000 calls per second
	var sent, calls int64         // calls that reached the service; calls made
	failing := false
	call := func() {
		calls++
		probe, err := b.Allow()
		if err != nil {
			if !errors.Is(err, circuitbreak.ErrOpen) || rpcerr.CodeOf(err) != rpcerr.Overloaded {
				t.Fatalf("rejection error %v", err)
			}
			return
		}
		sent++
		var res error
		if failing {
			res = errConn
		}
		b.Done(probe, res)
	}
	run := func(d time.Duration, until func() bool) time.Duration {
		for el := time.Duration(0); el < d; el += step {
			call()
			clk.Advance(step)
			if until != nil && until() {
				return el + step
			}
		}
		return d
	}
	run(5*time.Second, nil)
	if b.State() != circuitbreak.Closed || b.Stats().Opened != 0 {
		t.Fatalf("healthy service: state %v, stats %+v", b.State(), b.Stats())
	}
	failing = true
	before := b.Stats()
	callsBefore, sentBefore := calls, sent
	openedAfter := run(10*time.Second, func() bool { return b.State() == circuitbreak.Open })
	run(10*time.Second-openedAfter, nil)
	failing = false
	closedAfter := run(5*time.Second, func() bool { return b.State() == circuitbreak.Closed })
	after := b.Stats()
	probes := after.Probes - before.Probes
	share := float64(probes) / float64(calls-callsBefore)
	t.Logf("opened %v after the failures began; closed %v after recovery; %d half-open probes in %d calls (%.3f%%); %d of those calls reached the service",
		openedAfter, closedAfter, probes, calls-callsBefore, 100*share, sent-sentBefore)
	if openedAfter > time.Second {
		t.Errorf("opened after %v, want within 1s", openedAfter)
	}
	if closedAfter > 2*time.Second || b.State() != circuitbreak.Closed {
		t.Errorf("closed after %v (state %v), want within 2s", closedAfter, b.State())
	}
	if share > 0.01 {
		t.Errorf("probes are %.3f%% of calls, want <= 1%%", 100*share)
	}
}

func TestCountsAnswersAsSuccesses(t *testing.T) {
	clk := newClock()
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 10})
	answers := []error{
		rpcerr.NewBizStatusError(3, "no stock"),
		rpcerr.New(rpcerr.Declared, "declared exception"),
		rpcerr.New(rpcerr.Canceled, "caller gave up"),
		nil,
	}
	for i := range 1000 {
		probe, err := b.Allow()
		if err != nil {
			t.Fatalf("call %d rejected: %v", i, err)
		}
		b.Done(probe, answers[i%len(answers)])
		clk.Advance(time.Millisecond)
	}
	if b.Stats().Opened != 0 {
		t.Fatal("answers of a healthy service opened the breaker")
	}
}

func TestMinSamples(t *testing.T) {
	clk := newClock()
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 50})
	for range 49 {
		p, _ := b.Allow()
		b.Done(p, errConn)
	}
	if b.State() != circuitbreak.Closed {
		t.Fatal("opened before MinSamples calls")
	}
	p, _ := b.Allow()
	b.Done(p, errConn)
	if b.State() != circuitbreak.Open {
		t.Fatalf("state %v after 50 failures", b.State())
	}
}

func TestFailedProbeReopens(t *testing.T) {
	clk := newClock()
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 1, OpenFor: 100 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond})
	p, _ := b.Allow()
	b.Done(p, errConn)
	clk.Advance(100 * time.Millisecond)
	probe, err := b.Allow()
	if err != nil || !probe || b.State() != circuitbreak.HalfOpen {
		t.Fatalf("after OpenFor: probe %v err %v state %v", probe, err, b.State())
	}
	if _, err := b.Allow(); err == nil {
		t.Fatal("a second call let through while a probe is in flight")
	}
	clk.Advance(100 * time.Millisecond) // the probe's outcome is late
	probe2, err := b.Allow()
	if err != nil || !probe2 {
		t.Fatalf("a lost probe blocks the breaker: %v", err)
	}
	b.Done(true, errConn)
	if b.State() != circuitbreak.Open {
		t.Fatalf("state %v after a failed probe", b.State())
	}
	if _, err := b.Allow(); err == nil {
		t.Fatal("call let through right after a failed probe")
	}
}

// TestCanceledProbesAreNeutral: a half-open probe canceled before any
// answer (by its caller, or as the losing attempt of a backup request)
// neither closes the breaker nor opens it; it frees the probing slot.
func TestCanceledProbesAreNeutral(t *testing.T) {
	clk := newClock()
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 1, OpenFor: 100 * time.Millisecond, HalfOpenSuccesses: 2})
	p, _ := b.Allow()
	b.Done(p, errConn)
	clk.Advance(100 * time.Millisecond)
	canceled := rpcerr.Wrap(rpcerr.Canceled, context.Canceled, "caller gave up")
	for i := range 5 {
		probe, err := b.Allow()
		if err != nil || !probe {
			t.Fatalf("probe %d after canceled ones: %v %v", i, probe, err)
		}
		b.Done(true, canceled)
		if st := b.State(); st != circuitbreak.HalfOpen {
			t.Fatalf("state %v after %d canceled probes, want half-open", st, i+1)
		}
	}
	// Canceled probes do not break a run of successes either.
	for i := range 2 {
		probe, _ := b.Allow()
		b.Done(probe, nil)
		if i == 0 {
			probe, _ = b.Allow()
			b.Done(probe, canceled)
		}
	}
	if st := b.State(); st != circuitbreak.Closed {
		t.Fatalf("state %v after 2 successful probes, want closed", st)
	}
}

// TestLateProbeIsIgnored: probe P1 hangs past ProbeTimeout; P2 takes its
// slot and fails, the breaker opens again; after OpenFor P3 is the probe.
// P1's success then comes: it must neither count toward closing nor free
// P3's slot. The calls go through Group.Middleware.
func TestLateProbeIsIgnored(t *testing.T) {
	clk := newClock()
	const openFor = 100 * time.Millisecond
	g, err := circuitbreak.NewGroup(circuitbreak.Config{Now: clk.Now, MinSamples: 1, OpenFor: openFor, ProbeTimeout: openFor, HalfOpenSuccesses: 1})
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	type result struct{ err error }
	ep := g.Middleware(nil)(func(ctx context.Context, req, resp any) error {
		res := req.(chan result)
		if res == nil {
			return errConn
		}
		entered <- struct{}{}
		return (<-res).err
	})
	ctx := rpcinfo.NewContext(context.Background(), &rpcinfo.RPCInfo{Method: "get"})
	b := g.Get("get")
	b.Done(false, errConn) // open
	// hang starts a call that waits for its result; it returns the
	// channel to send it on and one that gets the call's error.
	hang := func() (chan result, chan error) {
		res, out := make(chan result), make(chan error, 1)
		go func() { out <- ep(ctx, res, nil) }()
		<-entered
		return res, out
	}
	clk.Advance(openFor)
	p1, p1out := hang()
	clk.Advance(openFor) // P1 is late: its slot goes to P2
	if err := ep(ctx, chan result(nil), nil); !errors.Is(err, errConn) {
		t.Fatalf("P2: %v", err)
	}
	if st := b.State(); st != circuitbreak.Open {
		t.Fatalf("state %v after P2 failed, want open", st)
	}
	clk.Advance(openFor)
	p3, p3out := hang()
	p1 <- result{}
	if err := <-p1out; err != nil {
		t.Fatal(err)
	}
	if st := b.State(); st != circuitbreak.HalfOpen {
		t.Fatalf("state %v after the late P1 succeeded, want half-open", st)
	}
	if err := ep(ctx, chan result(nil), nil); !errors.Is(err, circuitbreak.ErrOpen) {
		t.Fatalf("a call while P3 is in flight: %v, want rejected", err)
	}
	p3 <- result{}
	if err := <-p3out; err != nil || b.State() != circuitbreak.Closed {
		t.Fatalf("P3: %v, state %v; want nil, closed", err, b.State())
	}
}

func TestConfigValidate(t *testing.T) {
	for i, c := range []circuitbreak.Config{
		{ErrorRate: 1.5}, {ErrorRate: math.NaN()}, {ErrorRate: math.Inf(1)}, {ErrorRate: -0.5},
		{Window: -1}, {Buckets: 5000}, {MinSamples: -1}, {Window: 5, Buckets: 10},
	} {
		if _, err := circuitbreak.New(c); err == nil {
			t.Errorf("config %d accepted: %+v", i, c)
		}
	}
}

func TestMiddlewareFallback(t *testing.T) {
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 5, OpenFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var reached, fallbacks int
	mw := g.Middleware(func(ctx context.Context, req, resp any, err error) error {
		fallbacks++
		if errors.Is(err, circuitbreak.ErrOpen) {
			*resp.(*string) = "cached"
			return nil
		}
		return err
	})
	ep := mw(func(ctx context.Context, req, resp any) error { reached++; return errConn })
	ctx := rpcinfo.NewContext(context.Background(), &rpcinfo.RPCInfo{Method: "get"})
	for range 5 {
		var s string
		if err := ep(ctx, nil, &s); !errors.Is(err, errConn) {
			t.Fatalf("closed breaker: %v", err)
		}
	}
	var s string
	if err := ep(ctx, nil, &s); err != nil || s != "cached" {
		t.Fatalf("open breaker with fallback: %v %q", err, s)
	}
	if reached != 5 || fallbacks != 6 {
		t.Fatalf("service reached %d times, fallback %d times; want 5, 6", reached, fallbacks)
	}
	if g.Lookup("get").State() != circuitbreak.Open || g.Lookup("put") != nil {
		t.Fatal("breaker per method")
	}
}

func ExampleBreaker() {
	b, _ := circuitbreak.New(circuitbreak.Config{MinSamples: 3, OpenFor: time.Hour})
	for range 3 {
		probe, _ := b.Allow()
		b.Done(probe, rpcerr.New(rpcerr.Timeout, "no reply"))
	}
	_, err := b.Allow()
	fmt.Println(b.State(), errors.Is(err, circuitbreak.ErrOpen))
	// Output: open true
}

func BenchmarkBreakerClosed(b *testing.B) {
	br := newBreaker(b, circuitbreak.Config{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p, err := br.Allow()
			if err == nil {
				br.Done(p, nil)
			}
		}
	})
}

func BenchmarkBreakerOpen(b *testing.B) {
	br := newBreaker(b, circuitbreak.Config{MinSamples: 1, OpenFor: time.Hour})
	br.Done(false, errConn)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := br.Allow(); err == nil {
			b.Fatal("open breaker let a call through")
		}
	}
}

func BenchmarkGroupMiddleware(b *testing.B) {
	g, _ := circuitbreak.NewGroup(circuitbreak.Config{})
	ep := g.Middleware(nil)(func(ctx context.Context, req, resp any) error { return nil })
	ctx := rpcinfo.NewContext(context.Background(), &rpcinfo.RPCInfo{Method: "get"})
	b.ReportAllocs()
	for b.Loop() {
		ep(ctx, nil, nil)
	}
}

// TestWallClockStepsBack: the breaker measures its window with the
// monotonic clock. When the wall clock is set back (NTP, an operator), the
// failures that follow are still counted and open the breaker.
func TestWallClockStepsBack(t *testing.T) {
	clk := steppedclock.New(t)
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 10})
	for range 5 {
		b.Done(false, nil)
	}
	clk.Advance(10 * time.Millisecond)
	clk.StepBack(time.Hour)
	for i := range 20 {
		probe, err := b.Allow()
		if err != nil {
			if i >= 5 && errors.Is(err, circuitbreak.ErrOpen) {
				return // opened once failures were half of 10 calls or more
			}
			t.Fatalf("call %d: %v", i, err)
		}
		b.Done(probe, errConn)
	}
	t.Fatalf("after the wall clock went back 1h, 5 successes and 20 failures left the breaker %v, want open", b.State())
}

// TestSlowFailingProbes: the service hangs and every call fails at its
// timeout (2 s), later than OpenFor (500 ms). One probe goes at a time
// (the slot is held for ProbeTimeout, 10 s by default), and each probe's
// failure opens the breaker again. The slot was given to a new probe after
// OpenFor, and the failures of the earlier ones, come late, were ignored:
// probes piled up, four in flight at once, and the breaker stayed half-open
// for good.
func TestSlowFailingProbes(t *testing.T) {
	clk := newClock()
	const openFor, callTimeout = 500 * time.Millisecond, 2 * time.Second
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 1, OpenFor: openFor})
	b.Done(false, errConn) // open
	timeout := rpcerr.New(rpcerr.Timeout, "the call timed out")
	type probe struct {
		t     circuitbreak.Ticket
		endAt time.Duration
	}
	var out []probe
	most := 0
	for now := time.Duration(0); now <= 10*time.Second; now += 50 * time.Millisecond {
		kept := out[:0]
		for _, p := range out {
			if p.endAt <= now {
				b.Finish(p.t, timeout)
			} else {
				kept = append(kept, p)
			}
		}
		out = kept
		if tk, err := b.Admit(); err == nil { // a caller every 50 ms
			out = append(out, probe{tk, now + callTimeout})
		}
		most = max(most, len(out))
		clk.Advance(50 * time.Millisecond)
	}
	st := b.Stats()
	if most > 1 {
		t.Errorf("%d probes in flight at once, want 1", most)
	}
	// One probe every OpenFor + callTimeout: 4 in 10 s.
	if st.Opened < 4 || st.Probes > 5 {
		t.Errorf("stats %+v (state %v): want the breaker opened again by each probe's failure", st, b.State())
	}
}

// TestLateProbeFailureReopens: probe P1 hangs past ProbeTimeout and P2
// takes its slot; P1 then fails. The service has just failed a call: the
// half-open breaker opens, whichever probe it was.
func TestLateProbeFailureReopens(t *testing.T) {
	clk := newClock()
	const openFor = 100 * time.Millisecond
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 1, OpenFor: openFor, ProbeTimeout: openFor})
	b.Done(false, errConn) // open
	clk.Advance(openFor)
	p1, err := b.Admit()
	if err != nil || !p1.Probe() {
		t.Fatalf("P1: %v, %v", p1, err)
	}
	clk.Advance(openFor)
	p2, err := b.Admit()
	if err != nil || !p2.Probe() {
		t.Fatalf("P2 after ProbeTimeout: %v, %v", p2, err)
	}
	b.Finish(p1, errConn)
	if st := b.State(); st != circuitbreak.Open {
		t.Fatalf("state %v after the late P1 failed, want open", st)
	}
	b.Finish(p2, nil) // P2's success, come after the opening, is P2's no more
	if st := b.State(); st != circuitbreak.Open {
		t.Fatalf("state %v after P2 succeeded once the breaker reopened, want open", st)
	}
}
