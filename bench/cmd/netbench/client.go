package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
	"github.com/petrel-rpc/petrel/internal/hist"
)

// clientResult is what the client child reports about the measured window.
type clientResult struct {
	Requests uint64 `json:"requests"`  // replies completed inside the window
	Errors   uint64 `json:"errors"`    // failed dials, writes, reads and mismatched replies, warm-up included
	WindowNS int64  `json:"window_ns"` // the window's length
	P50NS    uint64 `json:"p50_ns"`
	P99NS    uint64 `json:"p99_ns"`
	P999NS   uint64 `json:"p999_ns"`
	// With -rate: how late the client sent relative to the schedule, a check
	// that the load generator kept up (the latencies include this lag).
	LagP50NS uint64 `json:"lag_p50_ns"`
	LagP99NS uint64 `json:"lag_p99_ns"`
}

// runClient is the load generator child: one goroutine per connection, each
// writing pipeline messages of size bytes in one write and reading the echoes
// back, closed loop or paced by -rate. It prints harness.MarkStart and
// harness.MarkEnd around the measured window and then harness.MarkResult.
func runClient(o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	if o.addr == "" {
		return errors.New("-addr is required")
	}
	go func() {
		// The parent holds our stdin; when it goes away, so do we.
		_, _ = io.Copy(io.Discard, stdin)
		fmt.Fprintln(stderr, "netbench client: parent went away")
		os.Exit(3)
	}()

	start := time.Now()
	t0 := start.Add(o.warmup)
	t1 := t0.Add(o.duration)
	// Each connection sends a batch of pipeline messages every interval;
	// connection i starts i/conns of an interval after the first.
	var intervalNS float64
	if o.rate > 0 {
		intervalNS = float64(o.pipeline) * float64(o.conns) / o.rate * 1e9
	}
	workers := make([]*worker, o.conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{
			id:         uint64(i),
			addr:       o.addr,
			size:       o.size,
			pipeline:   o.pipeline,
			paced:      o.rate > 0,
			first:      start.Add(time.Duration(intervalNS * float64(i) / float64(o.conns))),
			intervalNS: intervalNS,
			t0:         t0,
			t1:         t1,
			stderr:     stderr,
		}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}

	if err := harness.Window(stdout, t0, t1, &wg, ioGrace+time.Second, "connections"); err != nil {
		return err
	}

	var lat, lag hist.Histogram
	res := clientResult{WindowNS: t1.Sub(t0).Nanoseconds()}
	for _, w := range workers {
		lat.Merge(&w.hist)
		lag.Merge(&w.lag)
		res.Requests += w.requests
		res.Errors += w.errors
	}
	res.P50NS, res.P99NS, res.P999NS = lat.Quantile(0.50), lat.Quantile(0.99), lat.Quantile(0.999)
	res.LagP50NS, res.LagP99NS = lag.Quantile(0.50), lag.Quantile(0.99)
	return harness.PrintJSON(stdout, harness.MarkResult, res)
}

// ioGrace bounds how long a connection waits for replies after the window.
const ioGrace = 5 * time.Second

// worker drives one connection. Its fields are owned by its goroutine until
// the WaitGroup in runClient is done.
type worker struct {
	id         uint64
	addr       string
	size       int
	pipeline   int
	paced      bool
	first      time.Time // first scheduled send, when paced
	intervalNS float64   // between scheduled sends, when paced
	t0, t1     time.Time // the measured window
	stderr     io.Writer

	hist     hist.Histogram // latency of replies completed in the window
	lag      hist.Histogram // send time minus scheduled time, in the window, when paced
	requests uint64
	errors   uint64
	logged   int // errors logged so far (a few are enough)
}

func (w *worker) fail(err error) {
	w.errors++
	if w.logged < 3 {
		w.logged++
		fmt.Fprintf(w.stderr, "netbench client: conn %d: %v\n", w.id, err)
	}
}

func (w *worker) inWindow(t time.Time) bool { return !t.Before(w.t0) && t.Before(w.t1) }

func (w *worker) dial() (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", w.addr, 5*time.Second)
	if err != nil {
		return nil, nil, err
	}
	if err := c.SetDeadline(w.t1.Add(ioGrace)); err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return c, bufio.NewReaderSize(c, 64<<10), nil
}

func (w *worker) run() {
	size := w.size
	out := make([]byte, size*w.pipeline)
	for i := range out {
		out[i] = byte(i*7 + int(w.id))
	}
	in := make([]byte, size)
	var (
		conn net.Conn
		br   *bufio.Reader
		seq  uint64
		k    int64 // index of the next scheduled send, when paced
	)
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	for {
		var sched time.Time
		if w.paced {
			// An absolute schedule: a late connection sends at once and
			// never skips a slot, and latency counts from the slot.
			sched = w.first.Add(time.Duration(float64(k) * w.intervalNS))
			k++
			// A connection still behind at the window's end stops too.
			if !sched.Before(w.t1) || !time.Now().Before(w.t1) {
				return
			}
			if d := time.Until(sched); d > 0 {
				time.Sleep(d)
			}
		} else {
			sched = time.Now()
			if !sched.Before(w.t1) {
				return
			}
		}
		if conn == nil {
			var err error
			if conn, br, err = w.dial(); err != nil {
				w.fail(fmt.Errorf("dial: %w", err))
				conn = nil
				time.Sleep(50 * time.Millisecond)
				continue
			}
		}
		for i := 0; i < w.pipeline; i++ {
			stamp := w.id<<40 | (seq + uint64(i))
			m := out[i*size : (i+1)*size]
			binary.LittleEndian.PutUint64(m, stamp)
			binary.LittleEndian.PutUint64(m[size-8:], stamp)
		}
		sent := time.Now()
		if w.paced && w.inWindow(sent) {
			w.lag.Record(sent.Sub(sched).Nanoseconds())
		}
		err := w.roundTrip(conn, br, out, in, seq, sched)
		seq += uint64(w.pipeline)
		if err != nil {
			w.fail(err)
			_ = conn.Close()
			conn = nil
		}
	}
}

// syncWriteMax is the largest batch roundTrip writes before reading the
// replies. A larger one may not fit in the sockets' buffers: a server that
// echoes message by message stops reading once its replies fill them, and
// a client still writing would wait for itself until its deadline. Such a
// batch is written from a second goroutine while the replies are read.
const syncWriteMax = 128 << 10

// roundTrip writes one batch and reads its replies, checking each reply's
// stamps and recording the latency of those completed in the window.
func (w *worker) roundTrip(conn net.Conn, br *bufio.Reader, out, in []byte, seq uint64, sched time.Time) error {
	if len(out) <= syncWriteMax {
		if _, err := conn.Write(out); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return w.readReplies(br, in, seq, sched)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := conn.Write(out)
		wrote <- err
	}()
	err := w.readReplies(br, in, seq, sched)
	if err != nil {
		_ = conn.Close() // ends a write still waiting; out is reused after
	}
	if werr := <-wrote; werr != nil && err == nil {
		err = fmt.Errorf("write: %w", werr)
	}
	return err
}

// readReplies reads the replies to the batch of seq, checking each reply's
// stamps and recording the latency of those completed in the window.
func (w *worker) readReplies(br *bufio.Reader, in []byte, seq uint64, sched time.Time) error {
	size := w.size
	for i := 0; i < w.pipeline; i++ {
		if _, err := io.ReadFull(br, in); err != nil {
			return fmt.Errorf("read reply %d of %d: %w", i+1, w.pipeline, err)
		}
		now := time.Now()
		want := w.id<<40 | (seq + uint64(i))
		if got := binary.LittleEndian.Uint64(in); got != want {
			return fmt.Errorf("reply stamp %#x, want %#x", got, want)
		}
		if got := binary.LittleEndian.Uint64(in[size-8:]); got != want {
			return fmt.Errorf("reply tail stamp %#x, want %#x", got, want)
		}
		if w.inWindow(now) {
			w.hist.Record(now.Sub(sched).Nanoseconds())
			w.requests++
		}
	}
	return nil
}
