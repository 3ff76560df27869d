//go:build linux

package netpoll_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestDialLinkLocalWithZone: an IPv6 link-local address names its interface
// with a zone ("[fe80::1%eth0]:80"), without which the kernel cannot tell
// where to connect; the dial keeps the zone, as net.Dialer does.
func TestDialLinkLocalWithZone(t *testing.T) {
	var host string
	ifs, _ := net.Interfaces()
	for _, ifi := range ifs {
		addrs, _ := ifi.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() == nil && ipn.IP.IsLinkLocalUnicast() {
				host = ipn.IP.String() + "%" + ifi.Name
			}
		}
	}
	if host == "" {
		t.Skip("no IPv6 link-local address")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", host, err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	addr := net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	c, err := netpoll.DialConnection("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	if ra, ok := c.RemoteAddr().(*net.TCPAddr); !ok || ra.Zone == "" {
		t.Errorf("remote address %v, want the zone kept", c.RemoteAddr())
	}
}
