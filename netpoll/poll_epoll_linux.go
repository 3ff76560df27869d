//go:build linux

package netpoll

import (
	"golang.org/x/sys/unix"
	"os"
	"syscall"
	"time"
)

// Interest flags a poller understands (platform independent).
const (
	wantRead  = 1 << 0
	wantWrite = 1 << 1
	wantHup   = 1 << 2 // the peer's close alone, while reading is paused
)

// Event flags reported to operators.
const (
	evRead  = 1 << 0
	evWrite = 1 << 1
	evHup   = 1 << 2 // peer closed its side (EPOLLRDHUP / EV_EOF) or hung up
	evErr   = 1 << 3
)

// sysPoller is one epoll instance with an eventfd to wake it.
type sysPoller struct {
	epfd   int
	wakefd int
	events []epollEvent
	// file wraps a duplicate of epfd for the Go runtime's own poller: when
	// there is nothing to do, the poller goroutine can park until epfd is
	// readable (it has events) instead of blocking its thread in
	// epoll_wait. The scheduler then sleeps in the runtime's poller as for
	// any idle network goroutine: no thread is held in a system call, so no
	// processor is handed off and sysmon does not wake to retake it.
	//
	// While epfd is in the runtime's epoll, every event that reaches it is
	// passed on to that epoll too (the kernel wakes the waiters of a nested
	// instance), whether or not the poller parks: at saturation, where the
	// poller never parks, that cost rpcbench's petrel client and server
	// about 2% of their CPU a request. So file is opened at the first park
	// (attach) and closed (taking epfd out of the runtime's epoll) once
	// detachAfter waits in a row have not parked.
	file     *os.File
	rc       syscall.RawConn
	unparked int // waits in a row that did not park, while file is open

	// poll is park's callback, made once so that parking allocates nothing;
	// it leaves its results in polled and pollErr.
	poll    func(uintptr) bool
	polled  int
	pollErr syscall.Errno
}

// detachAfter is how many waits in a row that do not park close the
// poller's file: a busy poller or one that blocks in the kernel makes
// thousands a second, while one that parks when idle parks at most a few
// waits apart; attaching again costs two system calls.
const detachAfter = 1024

func newSysPoller(batch int) (*sysPoller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, sysErr("epoll_create1", err.(unix.Errno))
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, sysErr("eventfd", err.(unix.Errno))
	}
	s := &sysPoller{epfd: epfd, wakefd: wfd, events: make([]epollEvent, batch)}
	// The wake fd's event carries a nil operator.
	if err := s.ctl(unix.EPOLL_CTL_ADD, wfd, nil, unix.EPOLLIN); err != nil {
		unix.Close(wfd)
		unix.Close(epfd)
		return nil, err
	}
	// Non-blocking, so that the runtime's poller can take the file (a
	// duplicate shares the flag); epoll_wait ignores it.
	if err := unix.SetNonblock(epfd, true); err == nil {
		s.poll = func(uintptr) bool {
			s.polled, s.pollErr = epollWait(s.epfd, s.events, false)
			return s.polled > 0 || (s.pollErr != 0 && s.pollErr != unix.EINTR)
		}
	}
	return s, nil
}

// attach opens file, putting epfd in the runtime's epoll, and reports
// whether the poller can park: not when the runtime refuses the fd.
func (s *sysPoller) attach() bool {
	if s.poll == nil {
		return false
	}
	fd, err := dupFD(s.epfd)
	if err != nil {
		return false // out of fds: block in the kernel meanwhile
	}
	f := os.NewFile(uintptr(fd), "petrel-epoll")
	// When the runtime's epoll_ctl fails (ENOSPC at max_user_watches,
	// ENOMEM, ELOOP), os.NewFile still returns a file, only not pollable:
	// parking on it would fail. Such a file has no deadlines, which is how
	// it shows (no system call).
	if f.SetReadDeadline(time.Time{}) != nil {
		f.Close()
		return false // block in the kernel meanwhile
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return false
	}
	s.file, s.rc = f, rc
	return true
}

// detach closes file, taking epfd out of the runtime's epoll.
func (s *sysPoller) detach() {
	s.file.Close()
	s.file, s.rc, s.unparked = nil, nil, 0
}

func epollInterest(want int) uint32 {
	var ev uint32
	if want&wantRead != 0 {
		ev |= unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if want&wantHup != 0 {
		ev |= unix.EPOLLRDHUP
	}
	if want&wantWrite != 0 {
		ev |= unix.EPOLLOUT
	}
	return ev
}

func (s *sysPoller) add(fd int, op *fdOperator, want int) error {
	return s.ctl(unix.EPOLL_CTL_ADD, fd, op, epollInterest(want))
}

func (s *sysPoller) mod(fd int, op *fdOperator, want int) error {
	return s.ctl(unix.EPOLL_CTL_MOD, fd, op, epollInterest(want))
}

func (s *sysPoller) del(fd int) error {
	return s.ctl(unix.EPOLL_CTL_DEL, fd, nil, 0)
}

// wait fills s.events, polling without blocking, blocking in the kernel, or
// (park) parked in the Go runtime's poller.
func (s *sysPoller) wait(block, park bool) (int, error) {
	if block && park && (s.rc != nil || s.attach()) {
		s.unparked = 0
		if n, parked, err := s.park(); parked {
			return n, err
		}
		// The runtime could not wait for the file: block in the kernel.
	} else if s.file != nil {
		if s.unparked++; s.unparked >= detachAfter {
			s.detach()
		}
	}
	n, errno := epollWait(s.epfd, s.events, block)
	if errno != 0 {
		if errno == unix.EINTR {
			return 0, nil
		}
		return 0, sysErr("epoll_wait", errno)
	}
	return n, nil
}

// event returns the operator and the flags of the i-th event of the last wait.
func (s *sysPoller) event(i int) (*fdOperator, int) {
	e := &s.events[i]
	var ev int
	if e.Events&(unix.EPOLLIN|unix.EPOLLPRI) != 0 {
		ev |= evRead
	}
	if e.Events&unix.EPOLLOUT != 0 {
		ev |= evWrite
	}
	if e.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP) != 0 {
		ev |= evHup
	}
	if e.Events&unix.EPOLLERR != 0 {
		ev |= evErr
	}
	return e.operator(), ev
}

func (s *sysPoller) wake() {
	var one = [8]byte{1}
	unix.Write(s.wakefd, one[:])
}

func (s *sysPoller) drainWake() {
	var b [8]byte
	unix.Read(s.wakefd, b[:])
}

// park polls without blocking and, while nothing is pending, parks the
// goroutine in the runtime's poller until epfd has events. It reports
// parked false, having closed file, when the runtime could not wait for it;
// the caller then waits in the kernel.
func (s *sysPoller) park() (n int, parked bool, err error) {
	s.polled, s.pollErr = 0, 0
	rerr := s.rc.Read(s.poll)
	if s.pollErr != 0 && s.pollErr != unix.EINTR {
		return 0, true, sysErr("epoll_wait", s.pollErr)
	}
	if rerr != nil {
		// The error is the runtime's, not epoll_wait's (a file it cannot
		// poll): the poller is sound, and no event was taken (the callback
		// returned false), so a wait in the kernel loses nothing. Failing
		// would close every fd of the poller. The next park attaches anew.
		s.detach()
		return 0, false, nil
	}
	return s.polled, true, nil
}

func (s *sysPoller) close() {
	unix.Close(s.wakefd)
	if s.file != nil {
		s.detach()
	}
	unix.Close(s.epfd)
}
