package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
	"github.com/petrel-rpc/petrel/bench/internal/proc"
)

// result is the one JSON object rpcbench prints. The keys and their order
// are part of the interface (bench/README.md describes each).
type result struct {
	Impl              string   `json:"impl"`
	Size              int      `json:"size"`
	Conc              int      `json:"conc"`
	Rate              float64  `json:"rate"`
	DurationS         float64  `json:"duration_s"`
	Requests          uint64   `json:"requests"`
	QPS               float64  `json:"qps"`
	AvgUS             float64  `json:"avg_us"`
	P50US             float64  `json:"p50_us"`
	P99US             float64  `json:"p99_us"`
	P999US            float64  `json:"p999_us"`
	Errors            uint64   `json:"errors"`
	ServerCPUUSPerReq *float64 `json:"server_cpu_us_per_req"`
	ClientCPUUSPerReq *float64 `json:"client_cpu_us_per_req"`
}

// runParent runs one measurement: server child, client child, CPU time of
// both around the window, and the result on stdout.
func runParent(o *options, stdout, stderr io.Writer) error {
	p, err := harness.NewParent("rpcbench", o.pin, o.serverCPU, o.clientCPU, o.warmup+o.duration+ioGrace+60*time.Second, stderr)
	if err != nil {
		return err
	}
	defer p.Close()
	serverCPU, clientCPU, logf := p.ServerCPU, p.ClientCPU, p.Logf

	// The server.
	srvArgs := []string{"-role", "server", "-impl", o.impl, "-size", strconv.Itoa(o.size)}
	if o.serverCPUProfile != "" {
		srvArgs = append(srvArgs, "-cpuprofile", o.serverCPUProfile)
	}
	addr, err := p.StartServer(srvArgs)
	if err != nil {
		return err
	}
	logf("%s server pid %d at %s", o.impl, p.Srv.Pid, addr)

	// The client.
	cliArgs := []string{"-role", "client", "-addr", addr, "-impl", o.impl,
		"-size", strconv.Itoa(o.size), "-conc", strconv.Itoa(o.conc),
		"-rate", strconv.FormatFloat(o.rate, 'g', -1, 64),
		"-warmup", o.warmup.String(), "-duration", o.duration.String()}
	if o.clientCPUProfile != "" {
		cliArgs = append(cliArgs, "-cpuprofile", o.clientCPUProfile)
	}
	if err := p.StartClient(cliArgs); err != nil {
		return err
	}

	// Every thread of both children must be on its CPU (when pinned).
	checkThreads := func(when string) error {
		if !o.pin {
			return nil
		}
		stids, err := proc.Threads(p.Srv.Pid, serverCPU)
		if err != nil {
			return fmt.Errorf("server %s: %w", when, err)
		}
		ctids, err := proc.Threads(p.Cli.Pid, clientCPU)
		if err != nil {
			return fmt.Errorf("client %s: %w", when, err)
		}
		logf("pinning verified %s: server %d threads on CPU %d, client %d threads on CPU %d", when, len(stids), serverCPU, len(ctids), clientCPU)
		return nil
	}

	// The client's first call succeeded before its warm-up began.
	if _, err := p.Next(harness.MarkStart, o.warmup+30*time.Second); err != nil {
		return err
	}
	s0, sErr := proc.CPUTime(p.Srv.Pid)
	c0, cErr := proc.CPUTime(p.Cli.Pid)
	if err := checkThreads("at window start"); err != nil {
		return err
	}
	if _, err := p.Next(harness.MarkEnd, o.duration+30*time.Second); err != nil {
		return err
	}
	s1, err := proc.CPUTime(p.Srv.Pid)
	sErr = errors.Join(sErr, err)
	c1, err := proc.CPUTime(p.Cli.Pid)
	cErr = errors.Join(cErr, err)
	if err := checkThreads("at window end"); err != nil {
		return err
	}

	var cr clientResult
	if err := p.Result(&cr, ioGrace+10*time.Second); err != nil {
		return err
	}
	// The client exits only once its stdin closes, so that it was still
	// there to be sampled at the window's end above.
	_ = p.Cli.Stdin.Close()
	if err := p.WaitClient(10 * time.Second); err != nil {
		return err
	}
	p.StopServer() // the server writes its profile then

	res := result{
		Impl:      o.impl,
		Size:      o.size,
		Conc:      o.conc,
		Rate:      o.rate,
		DurationS: harness.Round(float64(cr.WindowNS)/1e9, 3),
		Requests:  cr.Requests,
		AvgUS:     harness.Round(cr.AvgNS/1e3, 2),
		P50US:     harness.Round(float64(cr.P50NS)/1e3, 2),
		P99US:     harness.Round(float64(cr.P99NS)/1e3, 2),
		P999US:    harness.Round(float64(cr.P999NS)/1e3, 2),
		Errors:    cr.Errors,
	}
	if cr.WindowNS > 0 {
		res.QPS = harness.Round(float64(cr.Requests)/(float64(cr.WindowNS)/1e9), 1)
	}
	perReq := func(who string, d time.Duration, err error) *float64 {
		if err != nil {
			logf("%s CPU time unavailable: %v", who, err)
			return nil
		}
		if cr.Requests == 0 {
			return nil
		}
		v := harness.Round(float64(d.Nanoseconds())/1e3/float64(cr.Requests), 4)
		return &v
	}
	res.ServerCPUUSPerReq = perReq("server", s1-s0, sErr)
	res.ClientCPUUSPerReq = perReq("client", c1-c0, cErr)
	if o.rate > 0 {
		logf("pacing lag (call start minus schedule): p50 %.1fus p99 %.1fus", float64(cr.LagP50NS)/1e3, float64(cr.LagP99NS)/1e3)
	}
	if cr.Errors > 0 {
		logf("%d calls failed: the run is invalid", cr.Errors)
	}
	return printResult(stdout, &res, o.jsonOut)
}

func printResult(w io.Writer, r *result, asJSON bool) error {
	if asJSON {
		return harness.PrintJSON(w, "", r)
	}
	_, err := fmt.Fprintf(w, "%s size=%d conc=%d rate=%g: %d requests in %.3fs = %.0f/s, avg %.1fus p50 %.1fus p99 %.1fus p99.9 %.1fus, %d errors, CPU per request: server %s us, client %s us\n",
		r.Impl, r.Size, r.Conc, r.Rate, r.Requests, r.DurationS, r.QPS,
		r.AvgUS, r.P50US, r.P99US, r.P999US, r.Errors, harness.OrNA(r.ServerCPUUSPerReq), harness.OrNA(r.ClientCPUUSPerReq))
	return err
}
