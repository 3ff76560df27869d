//go:build linux

package netpoll

import (
	"golang.org/x/sys/unix"
)

// Interest flags a poller understands (platform independent).
const (
	wantRead  = 1 << 0
	wantWrite = 1 << 1
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
	return s, nil
}

func epollInterest(want int) uint32 {
	var ev uint32
	if want&wantRead != 0 {
		ev |= unix.EPOLLIN | unix.EPOLLRDHUP
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
func (s *sysPoller) wait(block bool) (int, error) {
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

func (s *sysPoller) close() {
	unix.Close(s.wakefd)
	unix.Close(s.epfd)
}
