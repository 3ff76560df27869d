package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
	"github.com/petrel-rpc/petrel/internal/hist"
)

// clientResult is what the client child reports about the measured window.
type clientResult struct {
	Requests uint64  `json:"requests"` // calls completed inside the window
	Errors   uint64  `json:"errors"`   // failed calls and wrong replies, warm-up included
	WindowNS int64   `json:"window_ns"`
	AvgNS    float64 `json:"avg_ns"`
	P50NS    uint64  `json:"p50_ns"`
	P99NS    uint64  `json:"p99_ns"`
	P999NS   uint64  `json:"p999_ns"`
	// With -rate: how late callers started their calls relative to the
	// schedule (the latencies include this lag).
	LagP50NS uint64 `json:"lag_p50_ns"`
	LagP99NS uint64 `json:"lag_p99_ns"`
}

// ioGrace bounds how long callers may take to finish after the window.
const ioGrace = 5 * time.Second

// runClient is the client child: -conc goroutines calling the server, in a
// closed loop or paced by -rate. It prints harness.MarkStart and
// harness.MarkEnd around the measured window and then harness.MarkResult,
// and returns once the parent has closed its stdin: the parent reads this
// process's CPU time and checks its threads when the window ends, so it
// must not be gone by then.
func runClient(o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	if o.addr == "" {
		return errors.New("-addr is required")
	}
	resultOut := make(chan struct{}) // closed just before the result is printed
	parentDone := make(chan struct{})
	go func() {
		// The parent holds our stdin. It closes it once it has our result;
		// before that, its end means the parent went away, and so do we.
		_, _ = io.Copy(io.Discard, stdin)
		select {
		case <-resultOut:
			close(parentDone)
		default:
			fmt.Fprintln(stderr, "rpcbench client: parent went away")
			os.Exit(3)
		}
	}()
	stopProfile, err := startProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()

	cl, err := impls[o.impl].newClient(o.addr, o.conc)
	if err != nil {
		return fmt.Errorf("creating the %s client: %w", o.impl, err)
	}
	defer func() {
		if err := cl.Close(); err != nil {
			fmt.Fprintf(stderr, "rpcbench client: close: %v\n", err)
		}
	}()
	callers := make([]*caller, o.conc)
	for i := range callers {
		action, msg := requestFor(i, o.size)
		f, err := cl.caller(i, action, msg)
		if err != nil {
			return fmt.Errorf("caller %d: %w", i, err)
		}
		callers[i] = &caller{id: i, call: f, action: action, msg: msg, stderr: stderr}
	}
	// One call must succeed before the clock starts.
	if err := firstCall(callers[0]); err != nil {
		return err
	}

	start := time.Now()
	t0 := start.Add(o.warmup)
	t1 := t0.Add(o.duration)
	// Caller i calls every interval, starting i/conc of an interval after
	// the first.
	var intervalNS float64
	if o.rate > 0 {
		intervalNS = float64(o.conc) / o.rate * 1e9
	}
	var wg sync.WaitGroup
	for i, c := range callers {
		c.paced = o.rate > 0
		c.first = start.Add(time.Duration(intervalNS * float64(i) / float64(o.conc)))
		c.intervalNS = intervalNS
		c.t0, c.t1 = t0, t1
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run()
		}()
	}

	if err := harness.Window(stdout, t0, t1, &wg, ioGrace, "callers"); err != nil {
		return err
	}

	var lat, lag hist.Histogram
	res := clientResult{WindowNS: t1.Sub(t0).Nanoseconds()}
	for _, c := range callers {
		lat.Merge(&c.hist)
		lag.Merge(&c.lag)
		res.Requests += c.requests
		res.Errors += c.errors
	}
	res.AvgNS = lat.Mean()
	res.P50NS, res.P99NS, res.P999NS = lat.Quantile(0.50), lat.Quantile(0.99), lat.Quantile(0.999)
	res.LagP50NS, res.LagP99NS = lag.Quantile(0.50), lag.Quantile(0.99)
	// Closed before printing: the parent may close stdin as soon as it has
	// read the line.
	close(resultOut)
	if err := harness.PrintJSON(stdout, harness.MarkResult, res); err != nil {
		return err
	}
	<-parentDone
	return nil
}

// requestFor returns caller i's action and msg: a msg of size printable
// ASCII bytes (protobuf strings must be UTF-8) that differs between callers,
// so that a reply delivered to the wrong caller is caught.
func requestFor(i, size int) (action, msg string) {
	var b strings.Builder
	b.Grow(size)
	tag := fmt.Sprintf("caller-%d:", i)
	for b.Len() < size {
		if size-b.Len() >= len(tag) {
			b.WriteString(tag)
		} else {
			b.WriteByte('a' + byte(b.Len()%26))
		}
	}
	return "echo", b.String()
}

// firstCall retries c's call for up to 5 seconds, until one succeeds.
func firstCall(c *caller) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := c.once(context.Background())
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no call succeeded within 5s: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// caller is one calling goroutine. Its fields are owned by that goroutine
// until the WaitGroup in runClient is done.
type caller struct {
	id          int
	call        echoFunc
	action, msg string
	paced       bool
	first       time.Time // first scheduled call, when paced
	intervalNS  float64   // between scheduled calls, when paced
	t0, t1      time.Time // the measured window
	stderr      io.Writer
	requests    uint64
	errors      uint64
	logged      int // errors logged so far (a few are enough)
	npending    int // latencies in pending; by requests, in the line a call touches anyway

	hist hist.Histogram // latency of calls completed in the window
	lag  hist.Histogram // call start minus schedule, in the window, when paced

	// Latencies of the window's calls not yet in hist. A histogram is
	// 38 KB and conc of them do not stay in cache from one of a caller's
	// calls to its next: counting each call as it ended cost a cache miss
	// a call (perf: 2.4% of petrel's client CPU stalled on it). Added a batch
	// at a time, they cost a few nanoseconds each.
	pending [latencyBatch]uint32
}

// latencyBatch is how many latencies a caller holds before adding them to
// its histogram.
const latencyBatch = 4096

// recordLatency counts one call's latency (ns) in hist, at once or in a
// later batch.
func (c *caller) recordLatency(ns int64) {
	if ns < 0 || ns > math.MaxUint32 { // over 4.3 s: rare
		c.hist.Record(ns)
		return
	}
	c.pending[c.npending] = uint32(ns)
	c.npending++
	if c.npending == len(c.pending) {
		c.flushLatencies()
	}
}

// flushLatencies adds the pending latencies to hist.
func (c *caller) flushLatencies() {
	for _, ns := range c.pending[:c.npending] {
		c.hist.Record(int64(ns))
	}
	c.npending = 0
}

// once makes one call and checks the reply.
func (c *caller) once(ctx context.Context) error {
	action, msg, err := c.call(ctx)
	switch {
	case err != nil:
		return err
	case action != c.action || msg != c.msg:
		return fmt.Errorf("reply (%d-byte action, %d-byte msg) differs from the request", len(action), len(msg))
	}
	return nil
}

func (c *caller) inWindow(t time.Time) bool { return !t.Before(c.t0) && t.Before(c.t1) }

func (c *caller) run() {
	defer c.flushLatencies()
	ctx := context.Background()
	var k int64 // index of the next scheduled call, when paced
	// When the last call ended: in a closed loop, when the next one starts.
	// Reading the clock once a call rather than twice took petrel's client
	// from 5.87 to 5.77 µs of its processor a call (medians of 3 runs).
	now := time.Now()
	for {
		var sched time.Time
		if c.paced {
			// An absolute schedule: a late caller calls at once and never
			// skips a slot, and latency counts from the slot.
			sched = c.first.Add(time.Duration(float64(k) * c.intervalNS))
			k++
			if !sched.Before(c.t1) || !time.Now().Before(c.t1) {
				return
			}
			if d := time.Until(sched); d > 0 {
				time.Sleep(d)
			}
			if now := time.Now(); c.inWindow(now) {
				c.lag.Record(now.Sub(sched).Nanoseconds())
			}
		} else {
			sched = now
			if !sched.Before(c.t1) {
				return
			}
		}
		err := c.once(ctx)
		now = time.Now()
		if err != nil {
			c.errors++
			if c.logged < 3 {
				c.logged++
				fmt.Fprintf(c.stderr, "rpcbench client: caller %d: %v\n", c.id, err)
			}
			time.Sleep(10 * time.Millisecond) // no busy loop against a failing server
			now = time.Now()
			continue
		}
		if c.inWindow(now) {
			c.recordLatency(now.Sub(sched).Nanoseconds())
			c.requests++
		}
	}
}
