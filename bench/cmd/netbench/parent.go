package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/proc"
)

// result is the one JSON object netbench prints. The keys and their order
// are part of the interface (bench/README.md describes each).
type result struct {
	Impl              string   `json:"impl"`
	Size              int      `json:"size"`
	Conns             int      `json:"conns"`
	Pipeline          int      `json:"pipeline"`
	Rate              float64  `json:"rate"`
	DurationS         float64  `json:"duration_s"`
	Requests          uint64   `json:"requests"`
	QPS               float64  `json:"qps"`
	P50US             float64  `json:"p50_us"`
	P99US             float64  `json:"p99_us"`
	P999US            float64  `json:"p999_us"`
	Errors            uint64   `json:"errors"`
	ServerCPUUSPerReq *float64 `json:"server_cpu_us_per_req"`
	SyscallsPerReq    *float64 `json:"syscalls_per_req"`
}

// runParent runs one measurement: server child, client child, sampling of
// the server around the window, and the result on stdout.
func runParent(o *options, stdout, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this executable: %w", err)
	}
	serverCPU, clientCPU := -1, -1
	if o.pin {
		if o.serverCPU == o.clientCPU {
			return fmt.Errorf("-server-cpu and -client-cpu are both %d", o.serverCPU)
		}
		serverCPU, clientCPU = o.serverCPU, o.clientCPU
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "netbench: "+format+"\n", args...) }

	// Everything is bounded in time, and Ctrl-C ends the run; on every way
	// out the children are killed.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	limit := o.warmup + o.duration + ioGrace + 60*time.Second
	ctx, cancelLimit := context.WithTimeoutCause(ctx, limit, fmt.Errorf("the run took longer than %v", limit))
	defer cancelLimit()
	var kids proc.Group
	defer kids.KillAll()

	// The server.
	srv, err := kids.Start(exe, []string{"-role", "server", "-impl", o.impl, "-size", strconv.Itoa(o.size)}, serverCPU, stderr)
	if err != nil {
		return fmt.Errorf("starting the server: %w", err)
	}
	srvPid, srvExited := srv.Pid, srv.Exited
	line, err := srv.FirstLine(ctx, 10*time.Second, "server")
	if err != nil {
		return err
	}
	addr, err := readAddr(bufio.NewReader(strings.NewReader(line + "\n")))
	if err != nil {
		return err
	}
	if err := probe(ctx, addr, o.size); err != nil {
		return fmt.Errorf("the %s server at %s does not echo: %w", o.impl, addr, err)
	}
	logf("%s server pid %d at %s", o.impl, srvPid, addr)

	// The client.
	cli, err := kids.Start(exe, []string{"-role", "client", "-addr", addr, "-impl", o.impl,
		"-size", strconv.Itoa(o.size), "-conns", strconv.Itoa(o.conns),
		"-pipeline", strconv.Itoa(o.pipeline), "-rate", strconv.FormatFloat(o.rate, 'g', -1, 64),
		"-warmup", o.warmup.String(), "-duration", o.duration.String()}, clientCPU, stderr)
	if err != nil {
		return fmt.Errorf("starting the client: %w", err)
	}
	defer cli.Stdin.Close()
	cliPid, cliExited, cliLines := cli.Pid, cli.Exited, cli.Lines

	next := func(want string, within time.Duration) (string, error) {
		t := time.NewTimer(within)
		defer t.Stop()
		select {
		case line, ok := <-cliLines:
			if !ok {
				return "", fmt.Errorf("the client exited before %q: %s", strings.TrimSpace(want), cli.ExitStatus(5*time.Second))
			}
			if !strings.HasPrefix(line, want) {
				return "", fmt.Errorf("the client printed %q, want %q", line, want)
			}
			return line, nil
		case err := <-srvExited:
			return "", fmt.Errorf("the server exited during the run: %v", err)
		case <-t.C:
			return "", fmt.Errorf("no %q from the client within %v", strings.TrimSpace(want), within)
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	}
	// Every thread of both children must be on its CPU (when pinned). The
	// client is checked at the window's start only: at its end it may have
	// exited. The server's threads are listed for the syscall count too.
	checkThreads := func(when string, client bool) ([]string, error) {
		tids, err := proc.Threads(srvPid, serverCPU)
		if err != nil {
			return nil, fmt.Errorf("server %s: %w", when, err)
		}
		if !o.pin {
			return tids, nil
		}
		if !client {
			logf("pinning verified %s: server %d threads on CPU %d", when, len(tids), serverCPU)
			return tids, nil
		}
		ctids, err := proc.Threads(cliPid, clientCPU)
		if err != nil {
			return nil, fmt.Errorf("client %s: %w", when, err)
		}
		logf("pinning verified %s: server %d threads on CPU %d, client %d threads on CPU %d", when, len(tids), serverCPU, len(ctids), clientCPU)
		return tids, nil
	}

	if _, err := next(markStart, o.warmup+30*time.Second); err != nil {
		return err
	}
	cpu0, cpuErr := proc.CPUTime(srvPid)
	tids0, err := checkThreads("at window start", true)
	if err != nil {
		return err
	}
	// perf is attached now, when the warm-up has made the server's threads:
	// it counts the threads that exist when it attaches, and a thread created
	// later is counted only when it exits, which a Go runtime thread never
	// does. It starts disabled and is switched on through its control
	// descriptors, so the counting interval is known to within the
	// acknowledgement's latency; the count is scaled by the requests of that
	// interval at the window's rate.
	var (
		perf      *perfCounter
		perfOn    time.Time
		perfOff   time.Time
		perfTrust = true
	)
	if o.perf {
		if perf, err = startPerf(srvPid); err != nil {
			logf("perf unavailable, syscalls_per_req will be null: %v", err)
			perf = nil
		} else {
			kids.Add(perf.cmd.Process.Pid)
			if err := perf.command("enable", 5*time.Second); err != nil {
				logf("%v; syscalls_per_req will be null", err)
				perf.kill()
				perf = nil
			}
			perfOn = time.Now()
		}
	}

	if _, err := next(markEnd, o.duration+30*time.Second); err != nil {
		return err
	}
	if perf != nil {
		if err := perf.command("disable", 2*time.Second); err != nil {
			logf("%v; syscalls_per_req will be null", err)
			perf.kill()
			perf = nil
		}
		perfOff = time.Now()
	}
	cpu1, err := proc.CPUTime(srvPid)
	if cpuErr == nil {
		cpuErr = err
	}
	tids1, err := checkThreads("at window end", false)
	if err != nil {
		return err
	}
	if added := newThreads(tids0, tids1); len(added) > 0 {
		logf("the server created threads %v during the window; perf does not count them, so syscalls_per_req will be null", added)
		perfTrust = false
	}
	if on := perfOff.Sub(perfOn); perf != nil && on < o.duration/2 {
		logf("perf counted only %v of the %v window; syscalls_per_req will be null", on, o.duration)
		perfTrust = false
	}

	line, err = next(markResult, ioGrace+10*time.Second)
	if err != nil {
		return err
	}
	var cr clientResult
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, markResult)), &cr); err != nil {
		return fmt.Errorf("parsing the client's result: %w", err)
	}
	select {
	case err := <-cliExited:
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
	case <-time.After(5 * time.Second):
		return errors.New("the client did not exit after its result")
	}

	var syscalls *uint64
	if perf != nil {
		n, err := perf.stop()
		if err != nil {
			logf("perf: %v; syscalls_per_req will be null", err)
		} else if perfTrust {
			syscalls = &n
			logf("perf counted %d server syscalls in %v", n, perfOff.Sub(perfOn).Round(time.Millisecond))
		}
	}

	// Stop the server politely, then for sure.
	_ = srv.Stdin.Close()
	_ = srv.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srvExited:
	case <-time.After(5 * time.Second):
		logf("the server did not exit on SIGTERM; killing it")
	}

	res := result{
		Impl:      o.impl,
		Size:      o.size,
		Conns:     o.conns,
		Pipeline:  o.pipeline,
		Rate:      o.rate,
		DurationS: round(float64(cr.WindowNS)/1e9, 3),
		Requests:  cr.Requests,
		P50US:     round(float64(cr.P50NS)/1e3, 2),
		P99US:     round(float64(cr.P99NS)/1e3, 2),
		P999US:    round(float64(cr.P999NS)/1e3, 2),
		Errors:    cr.Errors,
	}
	if cr.WindowNS > 0 {
		res.QPS = round(float64(cr.Requests)/(float64(cr.WindowNS)/1e9), 1)
	}
	if cpuErr != nil {
		logf("server CPU time unavailable: %v", cpuErr)
	} else if cr.Requests > 0 {
		v := round(float64((cpu1-cpu0).Nanoseconds())/1e3/float64(cr.Requests), 4)
		res.ServerCPUUSPerReq = &v
	}
	if syscalls != nil && cr.Requests > 0 {
		// Requests in perf's interval, at the window's rate.
		reqs := float64(cr.Requests) / float64(cr.WindowNS) * float64(perfOff.Sub(perfOn).Nanoseconds())
		v := round(float64(*syscalls)/reqs, 4)
		res.SyscallsPerReq = &v
	}
	if o.rate > 0 {
		logf("pacing lag (send time minus schedule): p50 %.1fus p99 %.1fus", float64(cr.LagP50NS)/1e3, float64(cr.LagP99NS)/1e3)
	}
	return printResult(stdout, &res, o.jsonOut)
}

// newThreads returns the ids in after that are not in before.
func newThreads(before, after []string) []string {
	var added []string
	for _, t := range after {
		if !slices.Contains(before, t) {
			added = append(added, t)
		}
	}
	return added
}

func printResult(w io.Writer, r *result, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	opt := func(p *float64) string {
		if p == nil {
			return "n/a"
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	_, err := fmt.Fprintf(w, "%s size=%d conns=%d pipeline=%d rate=%g: %d requests in %.3fs = %.0f/s, p50 %.1fus p99 %.1fus p99.9 %.1fus, %d errors, server %s us CPU and %s syscalls per request\n",
		r.Impl, r.Size, r.Conns, r.Pipeline, r.Rate, r.Requests, r.DurationS, r.QPS,
		r.P50US, r.P99US, r.P999US, r.Errors, opt(r.ServerCPUUSPerReq), opt(r.SyscallsPerReq))
	return err
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// probe waits until the server at addr accepts a connection and echoes one
// message, for at most 5 seconds.
func probe(ctx context.Context, addr string, size int) error {
	deadline := time.Now().Add(5 * time.Second)
	msg := make([]byte, size)
	binary.LittleEndian.PutUint64(msg, 0x70726f6265) // "probe"
	got := make([]byte, size)
	var last error
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		last = func() error {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
				return err
			}
			if _, err := c.Write(msg); err != nil {
				return err
			}
			if _, err := io.ReadFull(c, got); err != nil {
				return err
			}
			if !bytes.Equal(got, msg) {
				return errors.New("echoed bytes differ")
			}
			return nil
		}()
		if last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return last
}
