//go:build linux || darwin || freebsd

package netpoll

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dialer opens client connections registered with Petrel's pollers.
type Dialer struct {
	// Timeout bounds the whole dial (resolution and connect); 0 (default)
	// leaves it to the context. A negative one has already passed: the
	// dial times out at once, as net.Dialer's does.
	Timeout time.Duration
}

// DialConnection dials address on network ("tcp", "tcp4", "tcp6" or "unix")
// with a timeout (0: none; negative: already passed).
func DialConnection(network, address string, timeout time.Duration) (Connection, error) {
	d := Dialer{Timeout: timeout}
	return d.DialContext(context.Background(), network, address)
}

// DialContext dials address on network ("tcp", "tcp4", "tcp6" or "unix").
// A host name that resolves to several addresses is dialed at each in turn,
// in the resolver's order, until one connects; if none does, the error is
// that of the first. A dial that times out returns an error with Timeout()
// true; one whose ctx is canceled returns an error that wraps ctx.Err().
// Either holds for a ctx that has ended before the dial, even if the peer
// would accept at once.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (Connection, error) {
	if d.Timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	targets, err := resolve(ctx, network, address)
	if err != nil {
		return nil, dialErr(network, address, err)
	}
	var first error
	for _, tg := range targets {
		// A connect can complete at once (a Unix socket, loopback TCP):
		// without this check a dial whose context has ended would still
		// succeed.
		if err := ctx.Err(); err != nil {
			return nil, dialErr(network, address, ctxDialErr(err))
		}
		c, err := dialOne(ctx, tg)
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, dialErr(network, address, ctxDialErr(err))
	}
	return nil, dialErr(network, address, first)
}

// dialOne connects to one resolved address.
func dialOne(ctx context.Context, tg target) (*connection, error) {
	family := unix.AF_INET
	switch tg.sa.(type) {
	case *unix.SockaddrInet6:
		family = unix.AF_INET6
	case *unix.SockaddrUnix:
		family = unix.AF_UNIX
	}
	fd, err := newSocket(family)
	if err != nil {
		return nil, err
	}
	c := newConnection(fd, nil, nil, tg.addr)
	err = unix.Connect(fd, tg.sa)
	if err != nil && err != unix.EINPROGRESS {
		closeFD(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	c.dialing.Store(true)
	if err := defaultManager.register(&c.op, wantWrite); err != nil {
		closeFD(fd)
		return nil, err
	}
	if err != nil { // EINPROGRESS: wait until the socket is writable
		if err := c.waitConnected(ctx); err != nil {
			c.closeWith(err)
			return nil, err
		}
	}
	// Before reading is on: from then the poller may meet the peer's close
	// and close the fd, whose number the kernel may give to another socket.
	if lsa, err := unix.Getsockname(fd); err == nil {
		c.local = sockaddrToAddr(lsa)
	}
	if family != unix.AF_UNIX {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	c.dialing.Store(false)
	if err := c.op.setInterest(wantRead); err != nil {
		c.closeWith(err)
		return nil, err
	}
	return c, nil
}

func (c *connection) waitConnected(ctx context.Context) error {
	for {
		select {
		case <-c.writeCh:
		case <-ctx.Done():
			return ctxDialErr(ctx.Err())
		}
		v, err := unix.GetsockoptInt(c.op.fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return os.NewSyscallError("getsockopt", err)
		}
		switch syscall.Errno(v) {
		case 0:
			return nil
		case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
			continue
		default:
			return os.NewSyscallError("connect", syscall.Errno(v))
		}
	}
}

// ctxDialErr is the error of a dial whose context ended with err: a timeout
// for a deadline, err itself otherwise.
func ctxDialErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errDialTimeout
	}
	return err
}

// dialErr names the dial in err; a timeout stays one (the *net.OpError
// unwraps to it, and its Timeout method says so).
func dialErr(network, address string, err error) error {
	return &net.OpError{Op: "dial", Net: network, Addr: addrString{network, address}, Err: err}
}

type addrString struct{ network, address string }

func (a addrString) Network() string { return a.network }
func (a addrString) String() string  { return a.address }

// target is one address to dial: the socket address and the net.Addr the
// connection reports as its remote address.
type target struct {
	sa   unix.Sockaddr
	addr net.Addr
}

// resolve turns address into the socket addresses to dial, in order.
func resolve(ctx context.Context, network, address string) ([]target, error) {
	switch network {
	case "unix":
		return []target{{&unix.SockaddrUnix{Name: address}, &net.UnixAddr{Name: address, Net: "unix"}}}, nil
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("netpoll: unsupported network %q (want tcp, tcp4, tcp6 or unix)", network)
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if errors.Is(err, strconv.ErrRange) {
		port = -1 // out of range below
	} else if err != nil {
		port, err = net.DefaultResolver.LookupPort(ctx, network, portStr)
		if err != nil {
			return nil, err
		}
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("netpoll: port %s is out of range 0-65535", portStr)
	}
	var ips []net.IPAddr
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IPAddr{{IP: ip}}
	} else {
		if host == "" {
			host = "localhost"
		}
		// Also parses a literal with a zone ("fe80::1%eth0").
		ips, err = net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
	}
	var targets []target
	for _, a := range ips {
		if ip4 := a.IP.To4(); ip4 != nil && network != "tcp6" {
			sa := &unix.SockaddrInet4{Port: port}
			copy(sa.Addr[:], ip4)
			targets = append(targets, target{sa, &net.TCPAddr{IP: ip4, Port: port}})
		} else if ip4 == nil && network != "tcp4" {
			// The zone names the interface of a link-local address,
			// without which the kernel refuses the connect.
			sa := &unix.SockaddrInet6{Port: port, ZoneId: zoneIndex(a.Zone)}
			copy(sa.Addr[:], a.IP.To16())
			targets = append(targets, target{sa, &net.TCPAddr{IP: a.IP, Port: port, Zone: a.Zone}})
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("netpoll: no %s address for %q", network, host)
	}
	return targets, nil
}

// zoneIndex returns the interface index an IPv6 zone names: an interface's
// name or its index in decimal (0 for none or an unknown one).
func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	return 0
}
