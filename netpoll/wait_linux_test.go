//go:build linux

package netpoll

import (
	"testing"
	"time"
)

// A failing epoll_pwait2 (ENOSYS on old kernels, EPERM under seccomp; here
// EBADF) turns brief waits off for good instead of failing the poller.
func TestWaitBriefFallsBack(t *testing.T) {
	s, err := newSysPoller(8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	start := time.Now()
	n, ok, err := s.waitBrief(200 * time.Microsecond)
	if err != nil || n != 0 {
		t.Fatalf("an idle brief wait: %d events, %v", n, err)
	}
	if ok && time.Since(start) < 200*time.Microsecond {
		t.Fatalf("a brief wait of 200µs returned after %v with no event", time.Since(start))
	}
	good := s.epfd
	s.epfd = -1
	n, ok, err = s.waitBrief(time.Microsecond)
	s.epfd = good
	if ok || err != nil || n != 0 || !s.noBrief {
		t.Fatalf("a failing epoll_pwait2: ok %v, %d events, err %v, noBrief %v; want a fallback", ok, n, err, s.noBrief)
	}
	if _, ok, _ := s.waitBrief(time.Microsecond); ok {
		t.Fatal("brief waits are back after a failure")
	}
}
