//go:build darwin || freebsd

package netpoll

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Interest flags a poller understands (platform independent).
const (
	wantRead  = 1 << 0
	wantWrite = 1 << 1
	// wantHup is the peer's close alone, while reading is paused: not
	// watched, as kqueue reports EV_EOF only with the read filter, which
	// would report the input too; the close is seen when reading resumes.
	wantHup = 1 << 2
)

// Event flags reported to operators.
const (
	evRead  = 1 << 0
	evWrite = 1 << 1
	evHup   = 1 << 2 // the peer closed its side (EV_EOF)
	evErr   = 1 << 3
)

// sysPoller is one kqueue with a user event to wake it.
type sysPoller struct {
	kq     int
	events []unix.Kevent_t
}

const wakeIdent = 0

func newSysPoller(batch int) (*sysPoller, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, sysErr("kqueue", err.(syscall.Errno))
	}
	unix.CloseOnExec(kq)
	s := &sysPoller{kq: kq, events: make([]unix.Kevent_t, batch)}
	ev := unix.Kevent_t{Ident: wakeIdent, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR}
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(kq)
		return nil, sysErr("kevent", err.(syscall.Errno))
	}
	return s, nil
}

func (s *sysPoller) add(fd int, op *fdOperator, want int) error {
	return s.mod(fd, op, want)
}

// mod sets the read and write filters of fd to match want.
func (s *sysPoller) mod(fd int, op *fdOperator, want int) error {
	for _, f := range [2]struct {
		filter int16
		on     bool
	}{{unix.EVFILT_READ, want&wantRead != 0}, {unix.EVFILT_WRITE, want&wantWrite != 0}} {
		ev := unix.Kevent_t{Filter: f.filter}
		unix.SetKevent(&ev, fd, int(f.filter), unix.EV_DELETE)
		if f.on {
			ev.Flags = unix.EV_ADD | unix.EV_ENABLE
			setUdata(&ev, op)
		}
		if _, err := unix.Kevent(s.kq, []unix.Kevent_t{ev}, nil, nil); err != nil && err != unix.ENOENT {
			return sysErr("kevent", err.(syscall.Errno))
		}
	}
	return nil
}

func (s *sysPoller) del(fd int) error {
	return s.mod(fd, nil, 0)
}

var zeroTimeout unix.Timespec

// wait polls for events, blocking in the kernel when block is set (parking in
// the Go runtime's poller is not implemented for kqueue; park is ignored).
func (s *sysPoller) wait(block, park bool) (int, error) {
	var ts *unix.Timespec
	if !block {
		ts = &zeroTimeout
	}
	n, err := unix.Kevent(s.kq, nil, s.events, ts)
	if err != nil {
		if err == unix.EINTR {
			return 0, nil
		}
		return 0, sysErr("kevent", err.(syscall.Errno))
	}
	return n, nil
}

func (s *sysPoller) event(i int) (*fdOperator, int) {
	e := &s.events[i]
	if e.Filter == unix.EVFILT_USER {
		return nil, 0
	}
	var ev int
	switch e.Filter {
	case unix.EVFILT_READ:
		ev |= evRead
	case unix.EVFILT_WRITE:
		ev |= evWrite
	}
	if e.Flags&unix.EV_EOF != 0 {
		ev |= evHup
	}
	if e.Flags&unix.EV_ERROR != 0 {
		ev |= evErr
	}
	return udata(e), ev
}

func (s *sysPoller) wake() {
	ev := unix.Kevent_t{Ident: wakeIdent, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}
	unix.Kevent(s.kq, []unix.Kevent_t{ev}, nil, nil)
}

func (s *sysPoller) drainWake() {} // EV_CLEAR resets the user event

func (s *sysPoller) close() { unix.Close(s.kq) }

// readv reads into the segments in order (one read per segment; it stops at a
// short read).
func readv(fd int, segs [][]byte, _ []unix.Iovec) (int, syscall.Errno) {
	total := 0
	for _, p := range segs {
		n, err := unix.Read(fd, p)
		if n > 0 {
			total += n
		}
		if err != nil {
			if total > 0 {
				return total, 0
			}
			return 0, err.(syscall.Errno)
		}
		if n < len(p) {
			break
		}
	}
	return total, 0
}

// writev writes the segments in order (one write per segment; it stops at a
// short write).
func writev(fd int, segs [][]byte, _ []unix.Iovec) (int, syscall.Errno) {
	total := 0
	for _, p := range segs {
		n, err := unix.Write(fd, p)
		if n > 0 {
			total += n
		}
		if err != nil {
			if total > 0 {
				return total, 0
			}
			return 0, err.(syscall.Errno)
		}
		if n < len(p) {
			break
		}
	}
	return total, 0
}
