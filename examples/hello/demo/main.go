// Command demo runs the hello example in one process: it starts a Petrel
// server of service Hello on 127.0.0.1 (a free port), calls each method
// through the generated client (Echo, Greet with a valid name and with an
// invalid one, which comes back as the declared exception InvalidName, and
// the oneway Notify), then runs a closed-loop benchmark of Echo from many
// concurrent callers and prints QPS and latency percentiles.
//
//	go run ./examples/hello/demo [-callers 50] [-duration 5s] [-pool long|mux] [-size 64]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/examples/hello/handler"
	"github.com/petrel-rpc/petrel/internal/hist"
	"github.com/petrel-rpc/petrel/server"
)

func main() {
	callers := flag.Int("callers", 50, "concurrent callers in the benchmark")
	duration := flag.Duration("duration", 5*time.Second, "length of the benchmark")
	pool := flag.String("pool", "long", fmt.Sprintf("client connections: long (a pooled connection per call in flight) or mux (%d shared connections)", client.DefaultMuxConnections))
	size := flag.Int("size", 64, "bytes of the message each benchmark call echoes")
	flag.Parse()
	if err := run(*callers, *duration, *pool, *size); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// Bounds of the flags: the size leaves room in a frame of the default
// maximum message size for the rest of the request.
const (
	maxCallers = 10000
	maxSize    = client.DefaultMaxMessageSize - 1024
)

func run(callers int, duration time.Duration, pool string, size int) error {
	if callers < 1 || duration <= 0 || size < 0 {
		return errors.New("need -callers >= 1, -duration > 0 and -size >= 0")
	}
	// Each caller keeps a latency histogram (38 KiB) and a message in flight.
	if callers > maxCallers || size > maxSize {
		return fmt.Errorf("-callers %d -size %d: want -callers <= %d and -size <= %d", callers, size, maxCallers, maxSize)
	}
	var poolOpt client.Option
	switch pool {
	case "long":
		// Keep an idle connection for every caller, so that none is
		// closed and dialled again between calls.
		poolOpt = client.WithLongConnection(client.LongPoolConfig{MaxIdlePerAddress: callers})
	case "mux":
		poolOpt = client.WithMuxConnection(0)
	default:
		return fmt.Errorf("-pool %q: want long or mux", pool)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h := new(handler.Handler)
	s := hello.NewHelloServer(h, server.WithListener(ln))
	served := make(chan error, 1)
	go func() { served <- s.Run() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop:", err)
		}
		if err := <-served; err != nil && !errors.Is(err, server.ErrServerStopped) {
			fmt.Fprintln(os.Stderr, "demo: server:", err)
		}
	}()
	addr := ln.Addr().String()
	fmt.Printf("server: serving Hello on %s\n", addr)

	c, err := hello.NewHelloClient("hello", client.WithHostPorts(addr), poolOpt)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()

	start := time.Now()
	resp, err := c.Echo(ctx, &hello.EchoRequest{Action: "say", Msg: "hello, petrel"})
	if err != nil {
		return fmt.Errorf("Echo: %w", err)
	}
	fmt.Printf("client: Echo(action=%q, msg=%q) -> action=%q msg=%q (%v, first call: dial included)\n",
		"say", "hello, petrel", resp.Action, resp.Msg, time.Since(start).Round(time.Microsecond))

	start = time.Now()
	greeting, err := c.Greet(ctx, "world")
	if err != nil {
		return fmt.Errorf("Greet: %w", err)
	}
	fmt.Printf("client: Greet(%q) -> %q (%v)\n", "world", greeting, time.Since(start).Round(time.Microsecond))

	for _, name := range []string{"", strings.Repeat("x", handler.MaxNameLen+1)} {
		_, err = c.Greet(ctx, name)
		var invalid *hello.InvalidName
		if !errors.As(err, &invalid) {
			return fmt.Errorf("Greet(%q): got %v, want the declared exception InvalidName", name, err)
		}
		shown := name
		if len(shown) > 8 {
			shown = shown[:8] + "..."
		}
		fmt.Printf("client: Greet(%q) -> declared exception %T{Name: %q, Reason: %q}\n", shown, invalid, truncate(invalid.Name, 11), invalid.Reason)
	}

	if err := c.Notify(ctx, "demo started"); err != nil {
		return fmt.Errorf("Notify: %w", err)
	}
	fmt.Println("client: Notify(\"demo started\") sent (oneway: no reply awaited)")
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	events, err := h.WaitEvents(wctx, 1)
	cancel()
	if err != nil {
		return fmt.Errorf("the server did not receive the oneway Notify: %w", err)
	}
	fmt.Printf("server: received Notify event %q\n", events[0])

	fmt.Printf("bench: %d concurrent callers of Echo (%d-byte message), %s pool, %v ...\n", callers, size, pool, duration)
	r := bench(c, callers, duration, size)
	fmt.Printf("bench: %d calls in %v: %.0f QPS, latency p50 %v, p99 %v, max %v; %d errors\n",
		r.calls, r.elapsed.Round(time.Millisecond), float64(r.calls)/r.elapsed.Seconds(), r.p50, r.p99, r.max, r.errors)
	if r.errors > 0 {
		return fmt.Errorf("%d calls failed during the benchmark, the first with: %v", r.errors, r.firstErr)
	}
	return nil
}

// truncate shortens s to n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

type benchResult struct {
	calls, errors int64
	firstErr      error
	elapsed       time.Duration
	p50, p99, max time.Duration
}

// bench runs callers goroutines that each call Echo in a loop until
// duration has passed, and checks every reply. Latencies go into a
// histogram per caller, so memory does not grow with the duration.
func bench(c hello.HelloClient, callers int, duration time.Duration, size int) benchResult {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		all      hist.Histogram // guarded by mu
		firstErr error          // guarded by mu
		errs     atomic.Int64
		stop     atomic.Bool
	)
	msg := strings.Repeat("m", size)
	begin := time.Now()
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			req := &hello.EchoRequest{Action: "bench", Msg: msg}
			lat := new(hist.Histogram)
			for !stop.Load() {
				t := time.Now()
				resp, err := c.Echo(ctx, req)
				if err == nil && resp.Msg != msg {
					err = fmt.Errorf("Echo returned %d bytes, want %d", len(resp.Msg), len(msg))
				}
				if err != nil {
					if errs.Add(1) == 1 {
						mu.Lock()
						firstErr = err
						mu.Unlock()
					}
					continue
				}
				lat.Record(int64(time.Since(t)))
			}
			mu.Lock()
			all.Merge(lat)
			mu.Unlock()
		}()
	}
	time.Sleep(duration)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(begin)
	return benchResult{
		calls:    int64(all.Total()),
		errors:   errs.Load(),
		firstErr: firstErr,
		elapsed:  elapsed,
		p50:      time.Duration(all.Quantile(0.50)).Round(time.Microsecond),
		p99:      time.Duration(all.Quantile(0.99)).Round(time.Microsecond),
		max:      time.Duration(all.Max()).Round(time.Microsecond),
	}
}
