package proc

import (
	"bufio"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
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
// 1 MiB are delivered whole.
func Lines(r io.Reader) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			ch <- s.Text()
		}
	}()
	return ch
}
