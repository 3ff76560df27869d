//go:build linux

package netpoll_test

import (
	"net"
	"testing"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestDialNegativeTimeout: a negative dial timeout, a budget already spent,
// times out at once, as net.Dialer's does (it used to mean no limit at all).
func TestDialNegativeTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go closeAccepted(ln)
	c, err := netpoll.DialConnection("tcp", ln.Addr().String(), -1)
	if err == nil {
		c.Close()
		t.Fatal("dial with a timeout of -1ns succeeded")
	}
	if !netpoll.IsTimeout(err) {
		t.Fatalf("dial with a timeout of -1ns: %v, want a timeout", err)
	}
}
