//go:build linux

package netpoll_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestDialTimeoutNamesAddress: a dial that times out says which address it
// dialed, as its other errors do (it said only "netpoll: dial timed out"),
// and is still a timeout for IsTimeout and net.Error.
func TestDialTimeoutNamesAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go closeAccepted(ln)
	addr := ln.Addr().String()
	c, err := netpoll.DialConnection("tcp", addr, -1)
	if err == nil {
		c.Close()
		t.Fatal("dial with a timeout of -1ns succeeded")
	}
	var ne net.Error
	if !netpoll.IsTimeout(err) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("dial with a timeout of -1ns: %v, want a timeout", err)
	}
	if !strings.Contains(err.Error(), addr) {
		t.Fatalf("dial timeout error %q does not name the address %s", err, addr)
	}
}
