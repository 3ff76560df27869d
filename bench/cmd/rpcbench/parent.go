package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "rpcbench: "+format+"\n", args...) }

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
	srvArgs := []string{"-role", "server", "-impl", o.impl, "-size", strconv.Itoa(o.size)}
	if o.serverCPUProfile != "" {
		srvArgs = append(srvArgs, "-cpuprofile", o.serverCPUProfile)
	}
	srv, err := kids.Start(exe, srvArgs, serverCPU, stderr)
	if err != nil {
		return fmt.Errorf("starting the server: %w", err)
	}
	srvPid, srvExited := srv.Pid, srv.Exited
	line, err := srv.FirstLine(ctx, 10*time.Second, "server")
	if err != nil {
		return err
	}
	addr, err := parseAddr(line)
	if err != nil {
		return err
	}
	logf("%s server pid %d at %s", o.impl, srvPid, addr)

	// The client.
	cliArgs := []string{"-role", "client", "-addr", addr, "-impl", o.impl,
		"-size", strconv.Itoa(o.size), "-conc", strconv.Itoa(o.conc),
		"-rate", strconv.FormatFloat(o.rate, 'g', -1, 64),
		"-warmup", o.warmup.String(), "-duration", o.duration.String()}
	if o.clientCPUProfile != "" {
		cliArgs = append(cliArgs, "-cpuprofile", o.clientCPUProfile)
	}
	cli, err := kids.Start(exe, cliArgs, clientCPU, stderr)
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
	// Every thread of both children must be on its CPU (when pinned).
	checkThreads := func(when string) error {
		if !o.pin {
			return nil
		}
		stids, err := proc.Threads(srvPid, serverCPU)
		if err != nil {
			return fmt.Errorf("server %s: %w", when, err)
		}
		ctids, err := proc.Threads(cliPid, clientCPU)
		if err != nil {
			return fmt.Errorf("client %s: %w", when, err)
		}
		logf("pinning verified %s: server %d threads on CPU %d, client %d threads on CPU %d", when, len(stids), serverCPU, len(ctids), clientCPU)
		return nil
	}

	// The client's first call succeeded before its warm-up began.
	if _, err := next(markStart, o.warmup+30*time.Second); err != nil {
		return err
	}
	s0, sErr := proc.CPUTime(srvPid)
	c0, cErr := proc.CPUTime(cliPid)
	if err := checkThreads("at window start"); err != nil {
		return err
	}
	if _, err := next(markEnd, o.duration+30*time.Second); err != nil {
		return err
	}
	s1, err := proc.CPUTime(srvPid)
	sErr = errors.Join(sErr, err)
	c1, err := proc.CPUTime(cliPid)
	cErr = errors.Join(cErr, err)
	if err := checkThreads("at window end"); err != nil {
		return err
	}

	line, err = next(markResult, ioGrace+10*time.Second)
	if err != nil {
		return err
	}
	var cr clientResult
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, markResult)), &cr); err != nil {
		return fmt.Errorf("parsing the client's result: %w", err)
	}
	// The client exits only once its stdin closes, so that it was still
	// there to be sampled at the window's end above.
	_ = cli.Stdin.Close()
	select {
	case err := <-cliExited:
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
	case <-time.After(10 * time.Second):
		return errors.New("the client did not exit after its result")
	}

	// Stop the server politely (it writes its profile then), then for sure.
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
		Conc:      o.conc,
		Rate:      o.rate,
		DurationS: round(float64(cr.WindowNS)/1e9, 3),
		Requests:  cr.Requests,
		AvgUS:     round(cr.AvgNS/1e3, 2),
		P50US:     round(float64(cr.P50NS)/1e3, 2),
		P99US:     round(float64(cr.P99NS)/1e3, 2),
		P999US:    round(float64(cr.P999NS)/1e3, 2),
		Errors:    cr.Errors,
	}
	if cr.WindowNS > 0 {
		res.QPS = round(float64(cr.Requests)/(float64(cr.WindowNS)/1e9), 1)
	}
	perReq := func(who string, d time.Duration, err error) *float64 {
		if err != nil {
			logf("%s CPU time unavailable: %v", who, err)
			return nil
		}
		if cr.Requests == 0 {
			return nil
		}
		v := round(float64(d.Nanoseconds())/1e3/float64(cr.Requests), 4)
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
	_, err := fmt.Fprintf(w, "%s size=%d conc=%d rate=%g: %d requests in %.3fs = %.0f/s, avg %.1fus p50 %.1fus p99 %.1fus p99.9 %.1fus, %d errors, CPU per request: server %s us, client %s us\n",
		r.Impl, r.Size, r.Conc, r.Rate, r.Requests, r.DurationS, r.QPS,
		r.AvgUS, r.P50US, r.P99US, r.P999US, r.Errors, opt(r.ServerCPUUSPerReq), opt(r.ClientCPUUSPerReq))
	return err
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}
