//go:build darwin || freebsd

package netpoll

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

func acceptConn(lfd int, loop *EventLoop, laddr net.Addr) (*connection, syscall.Errno) {
	fd, sa, err := unix.Accept(lfd)
	if err != nil {
		return nil, err.(syscall.Errno)
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err.(syscall.Errno)
	}
	c := newAccepted(fd, sa, laddr)
	c.loop = loop
	return c, 0
}

func newSocket(family int) (int, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
	if err != nil {
		return -1, sysErr("socket", err.(syscall.Errno))
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, sysErr("fcntl", err.(syscall.Errno))
	}
	return fd, nil
}
