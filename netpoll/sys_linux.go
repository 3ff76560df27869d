//go:build linux

package netpoll

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// acceptConn accepts one connection from the listening fd as a non-blocking,
// close-on-exec socket.
func acceptConn(lfd int, loop *EventLoop, laddr net.Addr) (*connection, syscall.Errno) {
	fd, sa, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	if err != nil {
		return nil, err.(syscall.Errno)
	}
	c := newAccepted(fd, sa, laddr)
	c.loop = loop
	return c, 0
}

func newSocket(family int) (int, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, sysErr("socket", err.(syscall.Errno))
	}
	return fd, nil
}
