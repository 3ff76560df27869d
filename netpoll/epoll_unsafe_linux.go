//go:build linux

package netpoll

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// epollEvent is the kernel's struct epoll_event with its data field as raw
// bytes, so that it can hold an operator pointer; epollEventPad (per
// architecture) makes the layout match the kernel's (packed on amd64 and 386).
type epollEvent struct {
	Events uint32
	_      epollEventPad
	Data   [8]byte
}

// operator returns the pointer stored in the event's data.
//
// Safe because every operator whose address is in the kernel is also held in
// Go memory (the poller's registry) from before it is added until after the
// batch in which it was deleted has been processed, so the garbage collector
// never frees what the kernel can still return; Go's heap objects do not move.
// The data field is not 8-byte aligned on amd64, so its bytes are copied into
// an aligned local pointer (a stack variable: no write barrier is skipped).
// A pointer fills the first ptrSize bytes of the field: all 8 on 64-bit
// systems, 4 on 32-bit ones.
func (e *epollEvent) operator() *fdOperator {
	var op *fdOperator
	*(*[ptrSize]byte)(unsafe.Pointer(&op)) = [ptrSize]byte(e.Data[:ptrSize])
	return op
}

// ptrSize is the size of a pointer.
const ptrSize = unsafe.Sizeof(uintptr(0))

func (s *sysPoller) ctl(op int, fd int, o *fdOperator, events uint32) error {
	var ev epollEvent
	ev.Events = events
	copy(ev.Data[:], (*[ptrSize]byte)(unsafe.Pointer(&o))[:])
	_, _, errno := syscall.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(s.epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	if errno != 0 {
		return sysErr("epoll_ctl", errno)
	}
	return nil
}

// epollWait blocks through the scheduler-aware Syscall6 when block is set (so
// the processor is handed on), and uses RawSyscall6 for a zero timeout, which
// returns at once.
func epollWait(epfd int, events []epollEvent, block bool) (int, syscall.Errno) {
	p := unsafe.Pointer(&events[0])
	var r uintptr
	var errno syscall.Errno
	if block {
		r, _, errno = syscall.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(p), uintptr(len(events)), ^uintptr(0), 0, 0)
	} else {
		r, _, errno = syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(p), uintptr(len(events)), 0, 0, 0)
	}
	return int(r), errno
}

// readv reads into the segments with one system call. It never blocks: the
// socket is non-blocking. One segment is read with recvfrom, which goes to
// the socket directly where read passes through the file layer first: a
// 1 KiB send and receive over loopback take 2% less time
// (BenchmarkSocketCalls, pinned to one CPU: 6.88 µs instead of 7.05,
// medians of 3). Every fd here is a socket (accepted or dialed).
func readv(fd int, segs [][]byte, iov []unix.Iovec) (int, syscall.Errno) {
	if len(segs) == 1 {
		p := segs[0]
		r, _, errno := syscall.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0)
		return int(r), errno
	}
	iov = fillIovec(iov, segs)
	r, _, errno := syscall.RawSyscall(unix.SYS_READV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	return int(r), errno
}

// writev writes the segments with one system call: sendto for one segment
// (for the reason readv uses recvfrom), with MSG_NOSIGNAL so that a peer
// gone away costs an EPIPE and no signal.
func writev(fd int, segs [][]byte, iov []unix.Iovec) (int, syscall.Errno) {
	if len(segs) == 1 {
		p := segs[0]
		r, _, errno := syscall.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
		return int(r), errno
	}
	iov = fillIovec(iov, segs)
	r, _, errno := syscall.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	return int(r), errno
}

func fillIovec(iov []unix.Iovec, segs [][]byte) []unix.Iovec {
	iov = iov[:0]
	for _, s := range segs {
		v := unix.Iovec{Base: &s[0]}
		v.SetLen(len(s))
		iov = append(iov, v)
	}
	return iov
}
