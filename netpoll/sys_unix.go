//go:build linux || darwin || freebsd

package netpoll

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

func closeFD(fd int) { unix.Close(fd) }

// stopListening makes the listening socket fd stop listening now, though fd
// stays open: its port is free again for a new listener (Linux; elsewhere
// it may do nothing).
func stopListening(fd int) { unix.Shutdown(fd, unix.SHUT_RD) }

// dupFD duplicates fd, close-on-exec.
func dupFD(fd int) (int, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, sysErr("dup", err.(syscall.Errno))
	}
	return d, nil
}

// newAccepted wraps an accepted socket; TCP sockets get TCP_NODELAY, as the
// net package sets it.
func newAccepted(fd int, sa unix.Sockaddr, laddr net.Addr) *connection {
	remote := sockaddrToAddr(sa)
	local := laddr
	if lsa, err := unix.Getsockname(fd); err == nil {
		if a := sockaddrToAddr(lsa); a != nil {
			local = a
		}
	}
	if _, ok := remote.(*net.TCPAddr); ok {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	return newConnection(fd, nil, local, remote)
}

func sockaddrToAddr(sa unix.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	case *unix.SockaddrInet6:
		ip := append(net.IP(nil), a.Addr[:]...)
		zone := ""
		if a.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(a.ZoneId)); err == nil {
				zone = ifi.Name
			}
		}
		return &net.TCPAddr{IP: ip, Port: a.Port, Zone: zone}
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	return nil
}
