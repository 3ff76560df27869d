//go:build linux

package netpoll

import (
	"fmt"
	"golang.org/x/sys/unix"
	"os"
	"syscall"
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
	// file wraps epfd for the Go runtime's own poller: when there is nothing
	// to do, the poller goroutine parks until epfd is readable (it has
	// events) instead of blocking its thread in epoll_wait. The scheduler
	// then sleeps in the runtime's poller as for any idle network goroutine:
	// no thread is held in a system call, so no processor is handed off and
	// sysmon does not wake to retake it.
	file *os.File
	rc   syscall.RawConn

	// poll is park's callback, made once so that parking allocates nothing;
	// it leaves its results in polled and pollErr.
	poll    func(uintptr) bool
	polled  int
	pollErr syscall.Errno
}

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
	if err := unix.SetNonblock(epfd, true); err == nil {
		s.file = os.NewFile(uintptr(epfd), "petrel-epoll")
		if rc, err := s.file.SyscallConn(); err == nil {
			s.rc = rc
			s.poll = func(uintptr) bool {
				s.polled, s.pollErr = epollWait(s.epfd, s.events, false)
				return s.polled > 0 || (s.pollErr != 0 && s.pollErr != unix.EINTR)
			}
		}
	}
	return s, nil
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

// wait fills s.events; block waits without a timeout, otherwise it returns at
// once.
// wait polls for events: without blocking, blocking in the kernel, or
// (park) parked in the Go runtime's poller.
func (s *sysPoller) wait(block, park bool) (int, error) {
	if block && park && s.rc != nil {
		return s.park()
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
// goroutine in the runtime's poller until epfd has events.
func (s *sysPoller) park() (int, error) {
	s.polled, s.pollErr = 0, 0
	err := s.rc.Read(s.poll)
	if s.pollErr != 0 && s.pollErr != unix.EINTR {
		return 0, sysErr("epoll_wait", s.pollErr)
	}
	if err != nil {
		return 0, fmt.Errorf("netpoll: waiting for events: %w", err)
	}
	return s.polled, nil
}

func (s *sysPoller) close() {
	unix.Close(s.wakefd)
	if s.file != nil {
		s.file.Close()
		return
	}
	unix.Close(s.epfd)
}
