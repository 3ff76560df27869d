package proc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Group tracks the processes a parent started so that every exit path can
// kill them; each is expected to lead its own process group (ChildAttr).
// The zero value is ready to use.
type Group struct {
	mu   sync.Mutex // guards pids
	pids []int      // guarded by mu
}

// Add records the child pid.
func (g *Group) Add(pid int) {
	g.mu.Lock()
	g.pids = append(g.pids, pid)
	g.mu.Unlock()
}

// KillAll sends SIGKILL to the process group of every recorded child and
// forgets them.
func (g *Group) KillAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, pid := range g.pids {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	g.pids = nil
}

// ChildEnv is this process's environment with GOMAXPROCS=1 in place of any
// GOMAXPROCS setting: a measured child runs on one CPU.
func ChildEnv() []string {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMAXPROCS=") {
			env = append(env, kv)
		}
	}
	return append(env, "GOMAXPROCS=1")
}

// Lines delivers the lines read from r on a channel, closed at EOF, so that
// a parent can wait for a child's output with a time limit. Lines of up to
// 1 MiB are delivered whole. r is closed at EOF when it is an io.Closer.
func Lines(r io.Reader) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		if c, ok := r.(io.Closer); ok {
			defer c.Close()
		}
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			ch <- s.Text()
		}
	}()
	return ch
}

// Child is a measured child process started by [Group.Start].
type Child struct {
	Cmd    *exec.Cmd
	Pid    int
	Stdin  io.WriteCloser // closing it tells the child to finish
	Lines  <-chan string  // the child's stdout, line by line
	Exited <-chan error   // receives Wait's result once
}

// Start runs exe with args as a child pinned to cpu (-1: not pinned), with
// GOMAXPROCS=1, its stderr going to stderr, and records it in g.
func (g *Group) Start(exe string, args []string, cpu int, stderr io.Writer) (*Child, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = ChildEnv()
	cmd.Stderr = stderr
	cmd.SysProcAttr = ChildAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Not cmd.StdoutPipe: Wait closes that pipe as soon as the child has
	// exited, and a last line the child wrote just before exiting ("result")
	// could be lost unread. This read end is closed by the Lines goroutine
	// at EOF, which comes once the child (and anything it started) is gone.
	out, w, err := os.Pipe()
	if err != nil {
		in.Close()
		return nil, err
	}
	cmd.Stdout = w
	err = StartPinned(cmd, cpu)
	w.Close()
	if err != nil {
		out.Close()
		in.Close()
		return nil, err
	}
	g.Add(cmd.Process.Pid)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return &Child{Cmd: cmd, Pid: cmd.Process.Pid, Stdin: in, Lines: Lines(out), Exited: exited}, nil
}

// ExitStatus waits up to within for the child to exit and says how it did,
// for an error message. It consumes Exited.
func (c *Child) ExitStatus(within time.Duration) string {
	select {
	case err := <-c.Exited:
		if err == nil {
			return "exit status 0"
		}
		return err.Error()
	case <-time.After(within):
		return "still running " + within.String() + " after closing its output"
	}
}

// FirstLine waits up to within (or until ctx ends) for the child's first
// line of output, then keeps draining the rest in the background.
func (c *Child) FirstLine(ctx context.Context, within time.Duration, what string) (string, error) {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case line, ok := <-c.Lines:
		if !ok {
			return "", fmt.Errorf("the %s exited before printing its first line", what)
		}
		go func() {
			for range c.Lines { // nothing more is expected; keep the pipe drained
			}
		}()
		return line, nil
	case <-t.C:
		return "", fmt.Errorf("the %s printed nothing within %v", what, within)
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}
