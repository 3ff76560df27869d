//go:build linux

package netpoll_test

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// fileListener wraps a *net.TCPListener and gives its fd through an
// *os.File (as listeners handed over by socket activation or a graceful
// restart often are): a syscall.Conn giving the listening socket's fd.
type fileListener struct {
	net.Listener
	f *os.File
}

func (l fileListener) SyscallConn() (syscall.RawConn, error) { return l.f.SyscallConn() }
func (l fileListener) Close() error {
	l.f.Close()
	return l.Listener.Close()
}

// TestFileWrappedListenerCloseWrapsErrClosed: Serve's doc says that closing
// ln makes Serve return an error that wraps net.ErrClosed. For a wrapper,
// 15b8160's watchClosed returned the error of its SyscallConn's Control as
// it was: with an *os.File's RawConn that is os.ErrClosed, and the
// net.ErrClosed the doc promises was missing.
func TestFileWrappedListenerCloseWrapsErrClosed(t *testing.T) {
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := tl.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	ln := fileListener{tl, f}
	loop, err := netpoll.NewEventLoop(netpoll.Config{OnRequest: echo})
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Shutdown(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Serve(ln) }()
	time.Sleep(100 * time.Millisecond)
	ln.Close()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Serve after its (wrapped) listener was closed returned %v, want an error wrapping net.ErrClosed as its doc says", err)
		}
	case <-timer.C:
		t.Fatal("Serve did not return within 5s of its listener being closed")
	}
}
