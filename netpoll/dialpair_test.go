//go:build linux || darwin || freebsd

package netpoll

import (
	"net"
	"testing"
	"time"
)

// dialPair dials a plain TCP listener and returns the dialed connection
// with the accepted side; both close when t ends.
func dialPair(t *testing.T) (*connection, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		s, _ := ln.Accept()
		acc <- s
	}()
	nc, err := DialConnection("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := <-acc
	if s == nil {
		nc.Close()
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { nc.Close(); s.Close() })
	return nc.(*connection), s
}

// DialTCP is dialPair for the external tests (package netpoll_test).
func DialTCP(t *testing.T) (Connection, net.Conn) {
	t.Helper()
	return dialPair(t)
}
