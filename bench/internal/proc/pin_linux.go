//go:build linux

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// StartPinned starts cmd with every thread of the new process allowed only on
// cpu (cpu < 0: not pinned).
//
// A Linux thread inherits the CPU affinity of the thread that creates it, and
// execve keeps it. Go forks the child from the calling OS thread, so the
// goroutine locks itself to its thread, narrows that thread's affinity to cpu,
// starts the child and restores the affinity: the child's first thread, and so
// every thread its Go runtime spawns later, starts pinned, with no window in
// which a runtime thread could run elsewhere (which pinning the child after
// start, or from its own main, would leave). The thread stays alive after
// UnlockOSThread, which matters because Pdeathsig is tied to the thread that
// forked.
func StartPinned(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var orig, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		return fmt.Errorf("reading CPU affinity: %w", err)
	}
	if !orig.IsSet(cpu) {
		return fmt.Errorf("CPU %d is not available to this process (run with -pin=false or choose -server-cpu/-client-cpu)", cpu)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pinning to CPU %d: %w", cpu, err)
	}
	startErr := cmd.Start()
	if err := unix.SchedSetaffinity(0, &orig); err != nil && startErr == nil {
		startErr = fmt.Errorf("restoring CPU affinity: %w", err)
	}
	return startErr
}

// Threads lists the thread ids of process pid and, when cpu >= 0, checks
// that the Cpus_allowed_list of every one is exactly cpu, returning an error
// naming the first thread allowed elsewhere.
func Threads(pid, cpu int) ([]string, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		return nil, fmt.Errorf("listing threads of pid %d: no /proc/%d/task", pid, pid)
	}
	want := strconv.Itoa(cpu)
	var tids []string
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread exited
		}
		tid := filepath.Base(filepath.Dir(path))
		tids = append(tids, tid)
		if cpu < 0 {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				if got := strings.TrimSpace(v); got != want {
					return tids, fmt.Errorf("thread %s of pid %d may run on CPUs %s, want %s", tid, pid, got, want)
				}
			}
		}
	}
	return tids, nil
}

// ChildAttr puts a child in its own process group (so the parent can kill it
// and everything it started) and kills it when the parent thread dies.
func ChildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// AllowedCPUs is the number of CPUs this process may run on.
func AllowedCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	return set.Count()
}
