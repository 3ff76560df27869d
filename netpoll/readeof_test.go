//go:build linux

package netpoll_test

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestReadReturnsEOFItselfAfterPeerClose checks that Read (the net.Conn
// side), once it has returned everything the peer sent before its clean
// close, returns io.EOF itself, as io.Reader's contract asks ("callers will
// test for EOF using =="), so that io.ReadAll and io.Copy end without an
// error. It used to return ErrPeerClosed, which only wraps io.EOF, and
// io.ReadAll failed with it. The nocopy Reader keeps ErrPeerClosed.
func TestReadReturnsEOFItselfAfterPeerClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		s.Write([]byte("hello"))
		s.Close()
	}()
	c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "hello" {
		t.Fatalf("io.ReadAll after the peer's clean close: %q, %v; want \"hello\", nil", got, err)
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("Read after the input is drained: %d, %v; want 0, io.EOF itself", n, err)
	}
	if _, err := c.Reader().Next(1); !errors.Is(err, netpoll.ErrPeerClosed) {
		t.Fatalf("Reader().Next after the peer's close: %v, want ErrPeerClosed", err)
	}
	c.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, netpoll.ErrConnClosed) {
		t.Fatalf("Read after Close: %v, want ErrConnClosed", err)
	}
}
