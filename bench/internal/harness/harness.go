// Package harness holds what the benchmark commands (cmd/netbench,
// cmd/rpcbench) share beyond running processes (package proc): the lines a
// server child and a client child print for their parent, the parent's side
// that starts both and follows the client through the measured window, the
// dispatch of a command to its role, and small pieces of their flag checks,
// their output and its comparison.
package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/proc"
)

// Lines the client child prints on stdout for the parent.
const (
	MarkStart  = "start"   // the measured window begins now
	MarkEnd    = "end"     // the measured window ended now
	MarkResult = "result " // followed by the client's result in JSON
)

// AddrPrefix starts the line on which a server child announces its address.
const AddrPrefix = "addr "

// RunRole runs the parent (role ""), the server or the client and returns
// the exit code, printing an error as "name role: error".
func RunRole(name, role string, stderr io.Writer, parent, server, client func() error) int {
	var err error
	switch role {
	case "server":
		err = server()
	case "client":
		err = client()
	case "":
		role = "parent"
		err = parent()
	default:
		err = fmt.Errorf("unknown -role %q", role)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", name, role, err)
		return 1
	}
	return 0
}

// CheckTiming checks the flags that time a run.
func CheckTiming(rate float64, warmup, duration time.Duration) error {
	switch {
	case rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0):
		return fmt.Errorf("-rate %g: must be a finite number, not negative", rate)
	case warmup < 0:
		return fmt.Errorf("-warmup %v: must not be negative", warmup)
	case duration <= 0:
		return fmt.Errorf("-duration %v: must be positive", duration)
	}
	return nil
}

// Parent is the parent's side of one measurement: its server and client
// children, and the context that bounds the run.
type Parent struct {
	Ctx                  context.Context // ends on Ctrl-C, SIGTERM or the run's time limit
	Kids                 proc.Group      // killed by Close, with anything else added
	Srv, Cli             *proc.Child
	ServerCPU, ClientCPU int // -1: not pinned

	name, exe string
	stderr    io.Writer
	cancel    func()
}

// NewParent prepares a measurement by this executable, whose children are
// pinned to serverCPU and clientCPU when pin is set and log to stderr, and
// which may last up to limit. Close must follow.
func NewParent(name string, pin bool, serverCPU, clientCPU int, limit time.Duration, stderr io.Writer) (*Parent, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this executable: %w", err)
	}
	p := &Parent{ServerCPU: -1, ClientCPU: -1, name: name, exe: exe, stderr: stderr}
	if pin {
		if serverCPU == clientCPU {
			return nil, fmt.Errorf("-server-cpu and -client-cpu are both %d", serverCPU)
		}
		p.ServerCPU, p.ClientCPU = serverCPU, clientCPU
	}
	// Everything is bounded in time, and Ctrl-C ends the run; on every way
	// out (Close) the children are killed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeoutCause(ctx, limit, fmt.Errorf("the run took longer than %v", limit))
	p.Ctx, p.cancel = ctx, func() { cancel(); stop() }
	return p, nil
}

// Close closes the client's stdin (a client still running takes that as the
// parent going away), kills every child and ends Ctx.
func (p *Parent) Close() {
	if p.Cli != nil {
		_ = p.Cli.Stdin.Close()
	}
	p.Kids.KillAll()
	p.cancel()
}

// Logf logs a line on stderr, after the command's name.
func (p *Parent) Logf(format string, args ...any) {
	fmt.Fprintf(p.stderr, p.name+": "+format+"\n", args...)
}

// StartServer starts the server child with args and returns the address it
// announces.
func (p *Parent) StartServer(args []string) (string, error) {
	srv, err := p.Kids.Start(p.exe, args, p.ServerCPU, p.stderr)
	if err != nil {
		return "", fmt.Errorf("starting the server: %w", err)
	}
	p.Srv = srv
	line, err := srv.FirstLine(p.Ctx, 10*time.Second, "server")
	if err != nil {
		return "", err
	}
	addr, ok := strings.CutPrefix(line, AddrPrefix)
	if !ok || addr == "" {
		return "", fmt.Errorf("the server printed %q, want \"addr HOST:PORT\"", line)
	}
	return addr, nil
}

// StartClient starts the client child with args.
func (p *Parent) StartClient(args []string) error {
	cli, err := p.Kids.Start(p.exe, args, p.ClientCPU, p.stderr)
	if err != nil {
		return fmt.Errorf("starting the client: %w", err)
	}
	p.Cli = cli
	return nil
}

// Next waits up to within for the client's next line, which must start with
// want; the server's exit ends the wait too, as an error.
func (p *Parent) Next(want string, within time.Duration) (string, error) {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case line, ok := <-p.Cli.Lines:
		if !ok {
			return "", fmt.Errorf("the client exited before %q: %s", strings.TrimSpace(want), p.Cli.ExitStatus(5*time.Second))
		}
		if !strings.HasPrefix(line, want) {
			return "", fmt.Errorf("the client printed %q, want %q", line, want)
		}
		return line, nil
	case err := <-p.Srv.Exited:
		return "", fmt.Errorf("the server exited during the run: %v", err)
	case <-t.C:
		return "", fmt.Errorf("no %q from the client within %v", strings.TrimSpace(want), within)
	case <-p.Ctx.Done():
		return "", context.Cause(p.Ctx)
	}
}

// Result waits up to within for the client's result line and decodes it
// into v.
func (p *Parent) Result(v any, within time.Duration) error {
	line, err := p.Next(MarkResult, within)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, MarkResult)), v); err != nil {
		return fmt.Errorf("parsing the client's result: %w", err)
	}
	return nil
}

// WaitClient waits up to within for the client to exit, successfully.
func (p *Parent) WaitClient(within time.Duration) error {
	select {
	case err := <-p.Cli.Exited:
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
		return nil
	case <-time.After(within):
		return errors.New("the client did not exit after its result")
	}
}

// StopServer stops the server politely, by closing its stdin and with
// SIGTERM; Close kills it if it has not exited within 5 seconds.
func (p *Parent) StopServer() {
	_ = p.Srv.Stdin.Close()
	_ = p.Srv.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Srv.Exited:
	case <-time.After(5 * time.Second):
		p.Logf("the server did not exit on SIGTERM; killing it")
	}
}

// Serve is the server child's life once it has announced its address: it
// waits until its stdin closes (the parent went away) or it gets SIGTERM or
// SIGINT, then runs shutdown with a context that ends 2 seconds later, the
// signals still caught so that another does not cut it short. If serving
// ends first, it returns true and what serving returned.
func Serve(stdin io.Reader, served <-chan error, shutdown func(ctx context.Context)) (early bool, err error) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	parentGone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(parentGone)
	}()
	select {
	case err := <-served:
		return true, err
	case <-sig:
	case <-parentGone:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	shutdown(ctx)
	return false, nil
}

// Window is the client child's measured window: it prints MarkStart at t0
// and MarkEnd at t1, then waits for wg (the workers, which what names in the
// error) until grace after t1.
func Window(stdout io.Writer, t0, t1 time.Time, wg *sync.WaitGroup, grace time.Duration, what string) error {
	time.Sleep(time.Until(t0))
	if _, err := fmt.Fprintln(stdout, MarkStart); err != nil {
		return err
	}
	time.Sleep(time.Until(t1))
	if _, err := fmt.Fprintln(stdout, MarkEnd); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	wait := time.NewTimer(time.Until(t1.Add(grace)))
	defer wait.Stop()
	select {
	case <-done:
		return nil
	case <-wait.C:
		return fmt.Errorf("%s did not finish after the window", what)
	}
}

// PrintJSON prints prefix and v in JSON on one line.
func PrintJSON(w io.Writer, prefix string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", prefix, b)
	return err
}

// Round rounds v to places decimal places.
func Round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// OrNA formats *p for a result's line of text, "n/a" when p is nil.
func OrNA(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// Median is the median of vals, nil when there are none.
func Median(vals []float64) *float64 {
	if len(vals) == 0 {
		return nil
	}
	v := slices.Clone(vals)
	slices.Sort(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + m) / 2
	}
	return &m
}

// DecodeObject decodes the JSON object b into its keys, in order, and its values,
// numbers as json.Number: the commands' tests check a result's keys and
// their order, which are part of its interface.
func DecodeObject(b []byte) (keys []string, vals map[string]any, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object: %s", b)
	}
	vals = map[string]any{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k.(string))
		vals[k.(string)] = v
	}
	return keys, vals, nil
}
