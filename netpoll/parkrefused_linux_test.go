package netpoll

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestIdleWaitBlocksWhenRuntimeRefusesEpoll: an idle poller parks in the Go
// runtime's poller by putting a duplicate of its epoll fd into the
// runtime's epoll (attach), and blocks in the kernel when it cannot. The
// runtime may refuse the duplicate: its epoll_ctl fails at
// max_user_watches (ENOSPC), on ENOMEM, or, as forced here, on ELOOP. os.NewFile
// still returns a file then, only not pollable: attach took it, the park
// failed with "waiting for unsupported file type", and run failed every
// connection of the poller ("poller failed") at its first idle wait. Here
// the runtime's epoll refuses the duplicate because the poller's epoll
// already watches the runtime's. attach now checks that the file is
// pollable, and a park the runtime fails waits in the kernel instead.
func TestIdleWaitBlocksWhenRuntimeRefusesEpoll(t *testing.T) {
	// A pipe with a deadline makes sure the runtime's epoll exists, and
	// names it: the one whose fdinfo lists the pipe.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	r.SetReadDeadline(time.Now().Add(time.Hour))
	rfd := -1
	if rc, err := r.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { rfd = int(fd) })
	}
	rtep := runtimeEpollFD(rfd)
	if rtep < 0 {
		t.Skip("the runtime's epoll fd not found in /proc/self/fdinfo")
	}
	s, err := newSysPoller(8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ev := unix.EpollEvent{Events: unix.EPOLLIN}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, rtep, &ev); err != nil {
		t.Skipf("cannot nest the runtime's epoll: %v", err)
	}
	defer unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, rtep, nil)
	if s.attach() {
		s.detach()
		t.Fatal("attach took a file the runtime cannot poll")
	}
	// Should the runtime fail a park all the same (a file taken before
	// the runtime came to refuse it), the wait falls back to the kernel.
	fd, err := dupFD(s.epfd)
	if err != nil {
		t.Fatal(err)
	}
	s.file = os.NewFile(uintptr(fd), "petrel-epoll")
	if s.rc, err = s.file.SyscallConn(); err != nil {
		t.Fatal(err)
	}
	woken := make(chan struct{})
	go func() {
		defer close(woken)
		time.Sleep(20 * time.Millisecond)
		s.wake()
	}()
	defer func() { <-woken }() // s.close must not come before the wake
	// The runtime's epoll, nested, may have events pending: wait on, as
	// run does, until the wake comes.
	for waits := 1; ; waits++ {
		n, err := s.wait(true, true)
		if err != nil {
			t.Fatalf("an idle wait failed (%v) instead of blocking in the kernel: run would fail every fd of the poller", err)
		}
		for i := 0; i < n; i++ {
			if op, _ := s.event(i); op == nil {
				t.Logf("woken after %d waits", waits)
				return
			}
		}
	}
}

// runtimeEpollFD returns the epoll fd whose fdinfo lists fd among the fds
// it watches, or -1.
func runtimeEpollFD(fd int) int {
	if fd < 0 {
		return -1
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || l != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(info)) {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "tfd:" && f[1] == strconv.Itoa(fd) {
				n, _ := strconv.Atoi(e.Name())
				return n
			}
		}
	}
	return -1
}
