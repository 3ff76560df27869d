package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
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
	p, err := harness.NewParent("netbench", o.pin, o.serverCPU, o.clientCPU, o.warmup+o.duration+ioGrace+60*time.Second, stderr)
	if err != nil {
		return err
	}
	defer p.Close()
	serverCPU, clientCPU, logf := p.ServerCPU, p.ClientCPU, p.Logf

	// The server.
	addr, err := p.StartServer([]string{"-role", "server", "-impl", o.impl, "-size", strconv.Itoa(o.size)})
	if err != nil {
		return err
	}
	if err := probe(p.Ctx, addr, o.size); err != nil {
		return fmt.Errorf("the %s server at %s does not echo: %w", o.impl, addr, err)
	}
	logf("%s server pid %d at %s", o.impl, p.Srv.Pid, addr)

	// The client.
	if err := p.StartClient([]string{"-role", "client", "-addr", addr, "-impl", o.impl,
		"-size", strconv.Itoa(o.size), "-conns", strconv.Itoa(o.conns),
		"-pipeline", strconv.Itoa(o.pipeline), "-rate", strconv.FormatFloat(o.rate, 'g', -1, 64),
		"-warmup", o.warmup.String(), "-duration", o.duration.String()}); err != nil {
		return err
	}

	// Every thread of both children must be on its CPU (when pinned). The
	// client is checked at the window's start only: at its end it may have
	// exited. The server's threads are listed for the syscall count too.
	checkThreads := func(when string, client bool) ([]string, error) {
		tids, err := proc.Threads(p.Srv.Pid, serverCPU)
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
		ctids, err := proc.Threads(p.Cli.Pid, clientCPU)
		if err != nil {
			return nil, fmt.Errorf("client %s: %w", when, err)
		}
		logf("pinning verified %s: server %d threads on CPU %d, client %d threads on CPU %d", when, len(tids), serverCPU, len(ctids), clientCPU)
		return tids, nil
	}

	if _, err := p.Next(harness.MarkStart, o.warmup+30*time.Second); err != nil {
		return err
	}
	cpu0, cpuErr := proc.CPUTime(p.Srv.Pid)
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
		if perf, err = startPerf(p.Srv.Pid); err != nil {
			logf("perf unavailable, syscalls_per_req will be null: %v", err)
			perf = nil
		} else {
			p.Kids.Add(perf.cmd.Process.Pid)
			if err := perf.command("enable", 5*time.Second); err != nil {
				logf("%v; syscalls_per_req will be null", err)
				perf.kill()
				perf = nil
			}
			perfOn = time.Now()
		}
	}

	if _, err := p.Next(harness.MarkEnd, o.duration+30*time.Second); err != nil {
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
	cpu1, err := proc.CPUTime(p.Srv.Pid)
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

	var cr clientResult
	if err := p.Result(&cr, ioGrace+10*time.Second); err != nil {
		return err
	}
	if err := p.WaitClient(5 * time.Second); err != nil {
		return err
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

	p.StopServer()

	res := result{
		Impl:      o.impl,
		Size:      o.size,
		Conns:     o.conns,
		Pipeline:  o.pipeline,
		Rate:      o.rate,
		DurationS: harness.Round(float64(cr.WindowNS)/1e9, 3),
		Requests:  cr.Requests,
		P50US:     harness.Round(float64(cr.P50NS)/1e3, 2),
		P99US:     harness.Round(float64(cr.P99NS)/1e3, 2),
		P999US:    harness.Round(float64(cr.P999NS)/1e3, 2),
		Errors:    cr.Errors,
	}
	if cr.WindowNS > 0 {
		res.QPS = harness.Round(float64(cr.Requests)/(float64(cr.WindowNS)/1e9), 1)
	}
	if cpuErr != nil {
		logf("server CPU time unavailable: %v", cpuErr)
	} else if cr.Requests > 0 {
		v := harness.Round(float64((cpu1-cpu0).Nanoseconds())/1e3/float64(cr.Requests), 4)
		res.ServerCPUUSPerReq = &v
	}
	if syscalls != nil && cr.Requests > 0 {
		// Requests in perf's interval, at the window's rate.
		reqs := float64(cr.Requests) / float64(cr.WindowNS) * float64(perfOff.Sub(perfOn).Nanoseconds())
		v := harness.Round(float64(*syscalls)/reqs, 4)
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
		return harness.PrintJSON(w, "", r)
	}
	_, err := fmt.Fprintf(w, "%s size=%d conns=%d pipeline=%d rate=%g: %d requests in %.3fs = %.0f/s, p50 %.1fus p99 %.1fus p99.9 %.1fus, %d errors, server %s us CPU and %s syscalls per request\n",
		r.Impl, r.Size, r.Conns, r.Pipeline, r.Rate, r.Requests, r.DurationS, r.QPS,
		r.P50US, r.P99US, r.P999US, r.Errors, harness.OrNA(r.ServerCPUUSPerReq), harness.OrNA(r.SyscallsPerReq))
	return err
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
