// Command echo is an echo server and client over Petrel's netpoll alone, with
// no RPC layer (`make demo` runs the RPC example, examples/hello). It shows a
// few round trips, then loads the server from several connections for a few
// seconds and prints QPS and latency percentiles.
//
//	go run ./examples/echo [-conns 50] [-size 1024] [-duration 5s]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/internal/hist"
	"github.com/petrel-rpc/petrel/netpoll"
)

func main() {
	conns := flag.Int("conns", 50, "client connections in the load phase")
	size := flag.Int("size", 1024, "message size in bytes in the load phase")
	duration := flag.Duration("duration", 5*time.Second, "length of the load phase")
	flag.Parse()
	if err := run(*conns, *size, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}

// Bounds of the flags.
const (
	maxSize     = 16 << 20
	maxConns    = 10000
	maxInFlight = 1 << 30
)

func run(conns, size int, duration time.Duration) error {
	if conns < 1 || size < 1 || duration <= 0 {
		return fmt.Errorf("need -conns >= 1, -size >= 1 and -duration > 0")
	}
	// Each connection holds a message in flight at each end: bound what
	// the flags make the load phase allocate.
	if size > maxSize || conns > maxConns || conns*size > maxInFlight {
		return fmt.Errorf("-conns %d -size %d: want -size <= %d, -conns <= %d and -conns × -size <= %d bytes", conns, size, maxSize, maxConns, maxInFlight)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	loop, err := netpoll.NewEventLoop(netpoll.Config{
		// The handler echoes every byte that arrived, with one write.
		OnRequest: func(_ context.Context, c netpoll.Connection) error {
			r, w := c.Reader(), c.Writer()
			n := r.Len()
			in, err := r.Next(n)
			if err != nil {
				return err
			}
			out, err := w.Malloc(n)
			if err != nil {
				return err
			}
			copy(out, in)
			if err := r.Release(); err != nil {
				return err
			}
			return w.Flush()
		},
	})
	if err != nil {
		return err
	}
	go loop.Serve(ln)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		loop.Shutdown(ctx)
	}()
	addr := ln.Addr().String()
	fmt.Printf("server: Petrel netpoll echo server listening on %s (%d poller(s))\n", addr, netpoll.NumPollers())

	c, err := netpoll.DialConnection("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("client: connected from %s\n", c.LocalAddr())
	for _, msg := range []string{"hello, petrel", "nocopy buffers", "epoll + readv/writev"} {
		start := time.Now()
		c.Writer().WriteString(msg)
		if err := c.Writer().Flush(); err != nil {
			return err
		}
		got, err := c.Reader().Next(len(msg))
		if err != nil {
			return err
		}
		fmt.Printf("client: sent %q, got %q back in %v\n", msg, got, time.Since(start).Round(time.Microsecond))
		c.Reader().Release()
	}
	c.Close()

	fmt.Printf("load: %d connections, %d-byte messages, %v ...\n", conns, size, duration)
	qps, p50, p99, errs, first := load(addr, conns, size, duration)
	fmt.Printf("load: %.0f QPS, p50 %v, p99 %v, %d errors\n", qps, p50, p99, errs)
	if errs > 0 {
		return fmt.Errorf("%d errors during the load phase, the first: %w", errs, first)
	}
	return nil
}

// writeAsideAbove is the message size above which a load connection writes
// each message from a goroutine of its own while it reads the echo.
const writeAsideAbove = 128 << 10

// load runs a closed loop on each connection: write a message, wait for it to
// come back. A connection stops at its first error; first is the earliest of
// them. Latencies go into a histogram per connection, so memory does not
// grow with the duration.
func load(addr string, conns, size int, d time.Duration) (qps float64, p50, p99 time.Duration, errs int64, first error) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		all     hist.Histogram // guarded by mu
		failed  atomic.Int64
		stop    atomic.Bool
		started = time.Now()
	)
	fail := func(err error) {
		if failed.Add(1) == 1 {
			first = err
		}
	}
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := netpoll.DialConnection("tcp", addr, time.Second)
			if err != nil {
				fail(fmt.Errorf("dial %s: %w", addr, err))
				return
			}
			defer c.Close()
			c.SetReadTimeout(2 * time.Second)
			c.SetWriteTimeout(2 * time.Second)
			lat := new(hist.Histogram)
			sent := 0 // messages sent and echoed
			r, w := c.Reader(), c.Writer()
			// A message the buffers on the way may not hold is read back
			// while it is still going out: the server echoes what has
			// arrived, and once its reply had nowhere to go it would stop
			// reading, leaving both sides waiting in Flush.
			var flushed chan error
			if size > writeAsideAbove {
				flushed = make(chan error, 1)
			}
			for !stop.Load() {
				t := time.Now()
				p, err := w.Malloc(size)
				if err != nil {
					fail(fmt.Errorf("%s: Malloc(%d): %w", c.LocalAddr(), size, err))
					return
				}
				p[0] = byte(sent)
				if flushed != nil {
					go func() { flushed <- w.Flush() }()
				} else if err := w.Flush(); err != nil {
					fail(fmt.Errorf("%s: write of message %d: %w", c.LocalAddr(), sent, err))
					return
				}
				got, err := r.Next(size)
				if flushed != nil {
					// The write ends too: by the write timeout at the latest.
					if ferr := <-flushed; err == nil && ferr != nil {
						err = fmt.Errorf("write: %w", ferr)
					}
				}
				if err != nil {
					fail(fmt.Errorf("%s: message %d: %w", c.LocalAddr(), sent, err))
					return
				}
				if got[0] != byte(sent) {
					fail(fmt.Errorf("%s: message %d came back as another (first byte %d, want %d)", c.LocalAddr(), sent, got[0], byte(sent)))
					return
				}
				r.Release()
				lat.Record(int64(time.Since(t)))
				sent++
			}
			mu.Lock()
			all.Merge(lat)
			mu.Unlock()
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(started)
	if all.Total() == 0 {
		if first == nil {
			first = fmt.Errorf("no message came back within %v", d)
		}
		return 0, 0, 0, failed.Load() + 1, first
	}
	return float64(all.Total()) / elapsed.Seconds(), time.Duration(all.Quantile(0.50)), time.Duration(all.Quantile(0.99)), failed.Load(), first
}
