//go:build linux

package netpoll_test

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestAcceptBacksOffOnEMFILE: when the process is out of file descriptors the
// listener pauses instead of spinning on a socket that stays readable, and
// resumes accepting once descriptors are free again.
func TestAcceptBacksOffOnEMFILE(t *testing.T) {
	var accepted atomic.Int64
	_, addr := serve(t, netpoll.Config{
		OnRequest: echo,
		OnConnect: func(ctx context.Context, c netpoll.Connection) context.Context {
			accepted.Add(1)
			return ctx
		},
	})
	sa := tcpSockaddr(t, addr)
	const n = 20
	fds := make([]int, n)
	for i := range fds {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds[i] = fd
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()

	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	low := old
	low.Cur = uint64(len(entries) + 2) // room for a couple of accepts only
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	restored := false
	restore := func() {
		if !restored {
			unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
			restored = true
		}
	}
	defer restore()

	for _, fd := range fds {
		if err := unix.Connect(fd, sa); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	before := cpuTime()
	time.Sleep(300 * time.Millisecond)
	spent := cpuTime() - before
	restore()
	t.Logf("accepted %d of %d while out of fds; CPU over 300 ms: %v", accepted.Load(), n, spent)
	if spent > 100*time.Millisecond {
		t.Fatalf("the process used %v of CPU in 300 ms while out of fds: the accept loop spins", spent)
	}
	deadline := time.Now().Add(5 * time.Second)
	for accepted.Load() < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if accepted.Load() != n {
		t.Fatalf("accepted %d of %d after fds were free again", accepted.Load(), n)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
