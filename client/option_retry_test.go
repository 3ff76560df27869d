package client_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/stats"
)

// govHandler answers the methods "get" (idempotent in the tests' retry
// policies) and "put" (not idempotent) of the service "Gov" with fn.
type govHandler struct {
	fn func(ctx context.Context, method string, a *echoArgs, r *echoResult) error
}

func govMethod(name string) thrift.MethodInfo {
	return thrift.MethodInfo{
		Name:      name,
		NewArgs:   func() thrift.FastCodec { return new(echoArgs) },
		NewResult: func() thrift.FastCodec { return new(echoResult) },
		Handler: func(ctx context.Context, handler any, args, result thrift.FastCodec) error {
			return handler.(*govHandler).fn(ctx, name, args.(*echoArgs), result.(*echoResult))
		},
	}
}

var govServiceInfo = &thrift.ServiceInfo{Name: "Gov", Methods: []thrift.MethodInfo{govMethod("get"), govMethod("put")}}

// startGov runs a Petrel server of "Gov" on loopback answering with fn.
func startGov(tb testing.TB, fn func(ctx context.Context, method string, a *echoArgs, r *echoResult) error) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := server.New(server.WithListener(ln))
	if err := s.RegisterService(govServiceInfo, &govHandler{fn: fn}); err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Stop(ctx)
		<-done
	})
	return ln.Addr().String()
}

// deadAddr returns a loopback address where nothing listens (dials are
// refused).
func deadAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// namedPool is a connection pool option and its name, for tests that run
// against each pool.
type namedPool struct {
	name string
	opt  client.Option
}

// longAndMux returns the long pool and a multiplexed pool of muxConns
// connections.
func longAndMux(muxConns int) []namedPool {
	return []namedPool{
		{"long", client.WithLongConnection(client.LongPoolConfig{})},
		{"mux", client.WithMuxConnection(muxConns)},
	}
}

func newGovClient(tb testing.TB, opts ...client.Option) *client.Client {
	tb.Helper()
	c, err := client.New("Gov", opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func newRetryer(tb testing.TB, cfg retry.Config) *retry.Retryer {
	tb.Helper()
	r, err := retry.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// govPolicies: "get" idempotent, "put" not; retries without waiting.
func govPolicies(budget retry.BudgetConfig) retry.Config {
	noWait := retry.Backoff{Base: -1}
	return retry.Config{
		Methods: map[string]retry.Policy{
			"get": {MaxAttempts: 3, Idempotent: true, Backoff: noWait},
			"put": {MaxAttempts: 3, Backoff: noWait},
		},
		Budget: budget,
	}
}

var errInjected = rpcerr.New(rpcerr.Timeout, "injected failure")

// TestRetryIdempotencyOverTheWire: a dial refused is retried even for a
// method that is not idempotent (the request was not sent); a failure the
// handler returned is retried only for the idempotent method.
func TestRetryIdempotencyOverTheWire(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		calls.Add(1)
		if fail.Load() {
			return errInjected
		}
		r.Success, r.HasSuccess = append(r.Success[:0], a.Msg...), true
		return nil
	})
	for _, pool := range []client.Option{client.WithLongConnection(client.LongPoolConfig{}), client.WithMuxConnection(1)} {
		calls.Store(0)
		fail.Store(false)
		r := newRetryer(t, govPolicies(retry.BudgetConfig{Ratio: 1, MinRetries: 100}))
		c := newGovClient(t, client.WithHostPorts(deadAddr(t), addr), client.WithRetry(r), pool)
		for i := range 4 { // every other call picks the dead address first
			res := new(echoResult)
			if err := c.Call(context.Background(), "put", false, &echoArgs{Msg: []byte("x")}, res); err != nil || string(res.Success) != "x" {
				t.Fatalf("put %d: %v (a refused dial must be retried)", i, err)
			}
		}
		if n := calls.Load(); n != 4 {
			t.Fatalf("handler ran %d times for 4 puts", n)
		}
		c = newGovClient(t, client.WithHostPorts(addr), client.WithRetry(r), pool)
		fail.Store(true)
		calls.Store(0)
		err := c.Call(context.Background(), "put", false, &echoArgs{}, new(echoResult))
		if rpcerr.CodeOf(err) != rpcerr.Timeout || calls.Load() != 1 {
			t.Fatalf("failing put: %v after %d handler runs, want a timeout after 1", err, calls.Load())
		}
		calls.Store(0)
		err = c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult))
		if rpcerr.CodeOf(err) != rpcerr.Timeout || calls.Load() != 3 {
			t.Fatalf("failing get: %v after %d handler runs, want a timeout after 3", err, calls.Load())
		}
	}
}

// TestRetryAmplificationTwoHops is acceptance test 1 over real Petrel
// servers on loopback: client A calls service B, whose handler calls
// service C through client B with the handler's context; C fails 50% or
// 100% of the calls with a retryable error and B returns C's error. Both
// clients retry "get" (idempotent, 3 attempts, no backoff) within a
// budget of 10% over a window of 500 calls. A's calls come one after
// another at a steady rate of one per millisecond of a clock the test
// moves (the budgets' clock), so that the measured span, after one window
// of warm-up, is exactly three windows: the attempts at B and at C per
// call of A must then be within 1.10, with no tolerance. (Over wall-clock
// time the rate varies from call to call, and a span that is not made of
// whole windows can hold a few more retries than 10% of its own calls:
// those granted against calls just before it.) C's retried attempts carry
// the marker through TTHeader, and B's handler context has it.
func TestRetryAmplificationTwoHops(t *testing.T) {
	const (
		window = 500 // calls of A per budget window
		warmup = window
		run    = 3 * window
	)
	for _, failPct := range []int{100, 50} {
		var clock atomic.Int64 // the budgets' time: one millisecond per call of A
		now := func() time.Time { return time.Unix(0, clock.Load()) }
		budget := retry.BudgetConfig{Window: window * time.Millisecond, Buckets: 10, Now: now}
		var atB, atC, markedAtB, markedAtC atomic.Int64
		var measuring atomic.Bool
		addrC := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
			if measuring.Load() {
				atC.Add(1)
				if retry.IsRetry(ctx) {
					markedAtC.Add(1)
				}
			}
			if rand.IntN(100) < failPct {
				return errInjected
			}
			r.Success, r.HasSuccess = a.Msg, true
			return nil
		})
		clientB := newGovClient(t, client.WithHostPorts(addrC), client.WithRetry(newRetryer(t, govPolicies(budget))))
		addrB := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
			if measuring.Load() {
				atB.Add(1)
				if retry.IsRetry(ctx) {
					markedAtB.Add(1)
				}
			}
			return clientB.Call(ctx, "get", false, a, r)
		})
		clientA := newGovClient(t, client.WithHostPorts(addrB), client.WithRetry(newRetryer(t, govPolicies(budget))))
		var requests int64
		for i := range warmup + run {
			if i == warmup {
				measuring.Store(true)
			}
			if measuring.Load() {
				requests++
			}
			clientA.Call(context.Background(), "get", false, &echoArgs{Msg: []byte("m")}, new(echoResult))
			clock.Add(int64(time.Millisecond))
		}
		ampB := float64(atB.Load()) / float64(requests)
		ampC := float64(atC.Load()) / float64(requests)
		hop2 := float64(atC.Load()) / float64(atB.Load())
		t.Logf("two hops over Petrel, %d%% of C's replies failing: %d calls of A after %d of warm-up; %.4f attempts at B and %.4f at C per call (hop 2 alone %.4f); the retry marker was on %d of B's requests (A's retries: B's client does not retry them, and while A retries B's client yields its own retries to A) and %d of C's (B's own retries)",
			failPct, requests, warmup, ampB, ampC, hop2, markedAtB.Load(), markedAtC.Load())
		if ampB > 1.10 || hop2 > 1.10 || ampC > 1.10 {
			t.Errorf("amplification over 1.10: B %.4f, C %.4f, hop 2 %.4f", ampB, ampC, hop2)
		}
		if ampC < 1.05 || markedAtB.Load() == 0 {
			t.Errorf("retries not used or not marked (C %.4f, %d marked at B)", ampC, markedAtB.Load())
		}
	}
}

// TestBackupRequestP99 is acceptance test 3 against a real Petrel server on
// loopback whose handler sleeps 100 ms on 5% of the calls (drawn at
// random): with backup requests after 30 ms the p99 latency must be at
// most 60 ms; without them it is about 100 ms. (A backup attempt is itself
// slow 5% of the time: 0.25% of the calls then need a third attempt and end
// just past 60 ms. That is under the 1% that p99 leaves out, but with 600
// calls 6 such calls (Poisson with mean 1.5) came in CI; 2,400 calls, mean 6,
// reach the 24 that would fail the test about once in ten million runs.)
//
// Under the race detector, with other packages' tests on the same 2 cores
// (make test), the backup attempt itself is often slower than 30 ms: the
// best of 3 trials came out at 60.3 ms (75.9 ms in the other two). There
// the bound is 80 ms, which still needs the backups: without them the 5% of
// calls that sleep 100 ms make the p99 at least 100 ms.
func TestBackupRequestP99(t *testing.T) {
	const backup = 30 * time.Millisecond
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		if rand.IntN(100) < 5 {
			time.Sleep(100 * time.Millisecond)
		}
		r.Success, r.HasSuccess = a.Msg, true
		return nil
	})
	measure := func(c *client.Client) (p50, p99 time.Duration) {
		const workers, calls = 16, 150
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range calls {
					res := new(echoResult)
					start := time.Now()
					err := c.Call(context.Background(), "get", false, &echoArgs{Msg: []byte("hi")}, res)
					d := time.Since(start)
					if err != nil || string(res.Success) != "hi" {
						t.Errorf("call: %v %q", err, res.Success)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slices.Sort(lat)
		return lat[len(lat)/2], lat[len(lat)*99/100]
	}
	// A loaded machine (other test binaries on 2 cores) can delay a few
	// dozen calls by tens of milliseconds and so fail one trial; backup
	// requests that do not work fail every trial (p99 about 100 ms).
	const trials = 3
	bound := 2 * backup
	if raceEnabled {
		bound = 80 * time.Millisecond
	}
	for _, pool := range longAndMux(2) {
		var p99s []time.Duration
		for range trials {
			r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{
				"get": {MaxAttempts: 3, Idempotent: true, BackupDelay: backup},
			}})
			c := newGovClient(t, client.WithHostPorts(addr), client.WithRetry(r), pool.opt)
			p50, p99 := measure(c)
			plain := newGovClient(t, client.WithHostPorts(addr), pool.opt)
			_, p99plain := measure(plain)
			reqs, backups := r.Budget().Counts()
			t.Logf("%s pool: backup delay %v: p50 %v, p99 %v (without backup requests p99 %v); %d backups for %d calls",
				pool.name, backup, p50, p99, p99plain, backups, reqs)
			if p99s = append(p99s, p99); p99 <= bound || t.Failed() {
				break
			}
		}
		if p99 := slices.Min(p99s); p99 > bound {
			t.Errorf("%s pool: p99 %v in each of %d trials (%v), want <= %v", pool.name, p99, len(p99s), p99s, bound)
		}
	}
}

// TestBackupResultIsTheWinners: the result the caller gets is the one of
// the attempt that answered first, and a declared exception or business
// status reply ends the call.
func TestBackupResultIsTheWinners(t *testing.T) {
	var n atomic.Int32
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		if n.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond)
			r.Success, r.HasSuccess = []byte("slow"), true
			return nil
		}
		r.Success, r.HasSuccess = []byte("fast"), true
		return nil
	})
	r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{
		"get": {MaxAttempts: 2, Idempotent: true, BackupDelay: 10 * time.Millisecond},
	}})
	c := newGovClient(t, client.WithHostPorts(addr), client.WithRetry(r))
	res := new(echoResult)
	start := time.Now()
	if err := c.Call(context.Background(), "get", false, &echoArgs{}, res); err != nil {
		t.Fatal(err)
	}
	if string(res.Success) != "fast" || time.Since(start) > 200*time.Millisecond {
		t.Fatalf("got %q after %v; want the backup's reply at once", res.Success, time.Since(start))
	}
}

// traceTagger is a tracer that adds metainfo to the call's context and
// keeps the stats it is given.
type traceTagger struct{ st stats.Stats }

func (tt *traceTagger) Start(ctx context.Context) context.Context {
	return metainfo.WithValue(ctx, "trace", "t1")
}

func (tt *traceTagger) Finish(ctx context.Context, st *stats.Stats) { tt.st = *st }

// TestBackupAttemptsSeeTheCallsContext: the attempts of a backup-request
// call send the metainfo the tracer and a middleware added, as a call
// without backups does; the winner's remote address and the tracer's
// Send and Receive times are the call's.
func TestBackupAttemptsSeeTheCallsContext(t *testing.T) {
	var n atomic.Int32
	var mu sync.Mutex
	var seen []string
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		trace, _ := metainfo.GetValue(ctx, "trace")
		mw, _ := metainfo.GetValue(ctx, "mw")
		mu.Lock()
		seen = append(seen, trace+"/"+mw)
		mu.Unlock()
		if n.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond) // the backup answers first
		}
		r.Success, r.HasSuccess = []byte("x"), true
		return nil
	})
	r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{
		"get": {MaxAttempts: 2, Idempotent: true, BackupDelay: 10 * time.Millisecond},
	}})
	tt := &traceTagger{}
	var remote net.Addr
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			err := next(metainfo.WithValue(ctx, "mw", "m1"), req, resp)
			remote = rpcinfo.FromContext(ctx).RemoteAddr
			return err
		}
	}
	c := newGovClient(t, client.WithHostPorts(addr), client.WithRetry(r), client.WithTracer(tt), client.WithMiddleware(mw))
	if err := c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	if len(got) != 2 || got[0] != "t1/m1" || got[1] != "t1/m1" {
		t.Errorf("the server saw the metainfo %q; want \"t1/m1\" on both attempts", got)
	}
	if remote == nil || remote.String() != addr {
		t.Errorf("the middleware saw the remote address %v; want %s", remote, addr)
	}
	if tt.st.Send.IsZero() || tt.st.Receive.IsZero() || tt.st.ResponseSize == 0 {
		t.Errorf("tracer stats: Send %v, Receive %v, ResponseSize %d; want the winner's", tt.st.Send, tt.st.Receive, tt.st.ResponseSize)
	}
}

// TestNoRetryOfASpentCall: a call whose time is spent before it starts
// (a negative WithCallTimeout) fails at once: no retry, no backoff wait.
// (The breaker, which counts attempts elsewhere, lets a spent call by
// without counting it: the budget counts the retries.)
func TestNoRetryOfASpentCall(t *testing.T) {
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error { return nil })
	retrying, attempts := retryCountingAttempts(t)
	c := newGovClient(t, append(retrying, client.WithHostPorts(addr))...)
	err := c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult), client.WithCallTimeout(-time.Second))
	if rpcerr.CodeOf(err) != rpcerr.Timeout || attempts.retries() != 0 || attempts.Load() != 0 {
		t.Fatalf("%d retries, %d attempts counted by the breaker, error %v; want none and a timeout", attempts.retries(), attempts.Load(), err)
	}
}

// TestRetryAttemptTimeout: an attempt bounded by AttemptTimeout times out
// and the retry answers within the call's RPC timeout.
func TestRetryAttemptTimeout(t *testing.T) {
	var n atomic.Int32
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		if n.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond)
		}
		r.Success, r.HasSuccess = []byte("ok"), true
		return nil
	})
	r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{
		"get": {MaxAttempts: 2, Idempotent: true, AttemptTimeout: 50 * time.Millisecond},
	}})
	c := newGovClient(t, client.WithHostPorts(addr), client.WithRetry(r), client.WithRPCTimeout(time.Second))
	res := new(echoResult)
	start := time.Now()
	if err := c.Call(context.Background(), "get", false, &echoArgs{}, res); err != nil || string(res.Success) != "ok" {
		t.Fatalf("%v %q", err, res.Success)
	}
	if el := time.Since(start); el < 50*time.Millisecond || el > 250*time.Millisecond {
		t.Fatalf("call took %v; want the first attempt's 50ms timeout and a quick retry", el)
	}
	if n.Load() != 2 {
		t.Fatalf("%d attempts reached the server", n.Load())
	}
}

func TestWithRetryNil(t *testing.T) {
	if _, err := client.New("Gov", client.WithHostPorts("127.0.0.1:1"), client.WithRetry(nil)); err == nil {
		t.Fatal("WithRetry(nil) accepted")
	}
	if _, err := client.New("Gov", client.WithHostPorts("127.0.0.1:1"), client.WithCircuitBreaker(nil, nil)); err == nil {
		t.Fatal("WithCircuitBreaker(nil) accepted")
	}
	if _, err := client.New("Gov", client.WithHostPorts("127.0.0.1:1"), client.WithInstanceBreaker(nil)); err == nil {
		t.Fatal("WithInstanceBreaker(nil) accepted")
	}
}

// TestNotSentMarked: a refused dial is reported as not sent.
func TestNotSentMarked(t *testing.T) {
	c := newGovClient(t, client.WithHostPorts(deadAddr(t)))
	err := c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult))
	if rpcerr.CodeOf(err) != rpcerr.Connection || !retry.NotSent(err) {
		t.Fatalf("refused dial: %v (not sent %v)", err, retry.NotSent(err))
	}
	var e *rpcerr.Error
	if !errors.As(err, &e) {
		t.Fatal("errors.As *rpcerr.Error")
	}
}

// TestRetryKeepsTheCallsDeadline: time spent in a middleware outside the
// retry middleware counts against the call's RPC timeout: once the first
// attempt has timed out at the call's deadline, no retry is made (the retry
// middleware once took its deadline as the timeout from when it ran, and
// retried into time the call did not have).
func TestRetryKeepsTheCallsDeadline(t *testing.T) {
	addr := startGov(t, func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
		time.Sleep(time.Second)
		return nil
	})
	retrying, attempts := retryCountingAttempts(t)
	slow := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			time.Sleep(60 * time.Millisecond)
			return next(ctx, req, resp)
		}
	}
	c := newGovClient(t, append(retrying, client.WithHostPorts(addr),
		client.WithRPCTimeout(100*time.Millisecond), client.WithMiddleware(slow))...)
	err := c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult))
	if rpcerr.CodeOf(err) != rpcerr.Timeout || attempts.Load() != 1 || attempts.retries() != 0 {
		t.Fatalf("%d attempts, %d retries, error %v; want one attempt and a timeout", attempts.Load(), attempts.retries(), err)
	}
}

// attemptCount counts the attempts the breaker middleware sees (those with
// time left) and, through the retry budget, the retries made.
type attemptCount struct {
	atomic.Int32
	budget *retry.Budget
}

func (a *attemptCount) retries() int64 {
	_, n := a.budget.Counts()
	return n
}

// retryCountingAttempts returns the options of a client that makes up to 3
// attempts of "get" (1 ms apart) and counts them: the breaker middleware,
// inside the retry middleware, sees each attempt with time left, and the
// retry budget each retry.
func retryCountingAttempts(t *testing.T) ([]client.Option, *attemptCount) {
	t.Helper()
	r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{
		"get": {MaxAttempts: 3, Idempotent: true, Backoff: retry.Backoff{Base: time.Millisecond, Jitter: -1}},
	}})
	g, err := circuitbreak.NewGroup(circuitbreak.Config{})
	if err != nil {
		t.Fatal(err)
	}
	attempts := &attemptCount{budget: r.Budget()}
	count := func(ctx context.Context, req, resp any, err error) error {
		attempts.Add(1)
		return err
	}
	return []client.Option{client.WithRetry(r), client.WithCircuitBreaker(g, count)}, attempts
}
