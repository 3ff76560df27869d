//go:build linux

package netpoll_test

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestDeadlineErrorsWrapOSErrDeadlineExceeded checks that a read or a write
// past its deadline, and a dial past its timeout, fail with an error that
// errors.Is matches with os.ErrDeadlineExceeded, as net.Conn's contract
// says ("can be tested using errors.Is(err, os.ErrDeadlineExceeded)"),
// and still with IsTimeout. netpoll's timeout error used to match only its
// own sentinel, so code written for net.Conn missed the timeout.
func TestDeadlineErrorsWrapOSErrDeadlineExceeded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := ln.Accept()
		if err == nil {
			accepted <- s
		}
	}()
	c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-accepted
	defer s.Close()

	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, rerr := c.Read(make([]byte, 1))
	var ne net.Error
	if !errors.As(rerr, &ne) || !ne.Timeout() || !netpoll.IsTimeout(rerr) {
		t.Fatalf("read past the deadline: %v, not a timeout", rerr)
	}
	if !errors.Is(rerr, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v; errors.Is(err, os.ErrDeadlineExceeded) is false", rerr)
	}

	// Fill the socket so that the write must wait, and let its deadline pass.
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	_, werr := c.Write(make([]byte, 64<<20))
	if !netpoll.IsTimeout(werr) {
		t.Fatalf("a 64 MiB write to a peer that reads nothing: %v, want a timeout", werr)
	}
	if !errors.Is(werr, os.ErrDeadlineExceeded) {
		t.Errorf("write past the deadline: %v; errors.Is(err, os.ErrDeadlineExceeded) is false", werr)
	}

	dc, derr := netpoll.DialConnection("tcp", ln.Addr().String(), -1)
	if derr == nil {
		dc.Close()
		t.Fatal("dial with a timeout of -1ns succeeded")
	}
	if !netpoll.IsTimeout(derr) {
		t.Fatalf("dial past its timeout: %v, want a timeout", derr)
	}
	if !errors.Is(derr, os.ErrDeadlineExceeded) {
		t.Errorf("dial past its timeout: %v; errors.Is(err, os.ErrDeadlineExceeded) is false", derr)
	}
}
