package proc_test

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/proc"
)

func TestCPUTime(t *testing.T) {
	before, err := proc.CPUTime(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := proc.CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := after - before; d < 50*time.Millisecond {
		t.Errorf("150ms of spinning counted as %v of CPU", d)
	}
	if tck := proc.ClockTicks(); tck == 0 {
		t.Error("ClockTicks = 0")
	}
	if _, err := proc.CPUTime(-1); err == nil {
		t.Error("CPUTime(-1) gave no error")
	}
}

func TestStartPinned(t *testing.T) {
	if runtime.GOOS != "linux" || proc.AllowedCPUs() < 2 {
		t.Skip("needs Linux and 2 CPUs")
	}
	cmd := exec.Command("sleep", "5")
	cmd.SysProcAttr = proc.ChildAttr()
	var g proc.Group
	defer g.KillAll()
	if err := proc.StartPinned(cmd, 1); err != nil {
		t.Fatal(err)
	}
	g.Add(cmd.Process.Pid)
	tids, err := proc.Threads(cmd.Process.Pid, 1)
	if err != nil || len(tids) == 0 {
		t.Fatalf("Threads on CPU 1: %v, %v", tids, err)
	}
	if _, err := proc.Threads(cmd.Process.Pid, 0); err == nil || !strings.Contains(err.Error(), "may run on CPUs 1") {
		t.Errorf("Threads with the wrong CPU: %v, want an error naming CPU 1", err)
	}
	g.KillAll()
	if err := cmd.Wait(); err == nil {
		t.Error("the killed child exited cleanly")
	}
}

func TestChildEnvAndLines(t *testing.T) {
	t.Setenv("GOMAXPROCS", "7")
	n := 0
	for _, kv := range proc.ChildEnv() {
		if strings.HasPrefix(kv, "GOMAXPROCS=") {
			n++
			if kv != "GOMAXPROCS=1" {
				t.Errorf("ChildEnv has %q", kv)
			}
		}
	}
	if n != 1 {
		t.Errorf("ChildEnv has %d GOMAXPROCS entries, want 1", n)
	}
	var got []string
	for l := range proc.Lines(strings.NewReader("a\nbb\n\nccc")) {
		got = append(got, l)
	}
	if strings.Join(got, "|") != "a|bb||ccc" {
		t.Errorf("Lines = %q", got)
	}
}

// TestStartKeepsLastLine starts children that print a line and exit at once:
// the line must reach Lines even when Wait has already seen the exit (with
// cmd.StdoutPipe, Wait closed the pipe under the reader and a benchmark's
// "result" line was lost).
func TestStartKeepsLastLine(t *testing.T) {
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo")
	}
	var g proc.Group
	defer g.KillAll()
	for i := 0; i < 200; i++ {
		c, err := g.Start(echo, []string{"result"}, -1, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		if err := <-c.Exited; err != nil {
			t.Fatalf("echo: %v", err)
		}
		var got []string
		for l := range c.Lines {
			got = append(got, l)
		}
		if len(got) != 1 || got[0] != "result" {
			t.Fatalf("run %d: lines %q, want [result]", i, got)
		}
	}
}
