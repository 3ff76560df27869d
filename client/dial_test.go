//go:build linux

package client_test

import (
	"context"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// blackhole returns the address of a listening socket that never accepts,
// with its accept queue full, so that a new connect hangs (its SYNs are
// dropped).
func blackhole(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Skip(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skip(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Skip(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	// Fill the accept queue until a connect hangs.
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return addr // this one hung: the queue is full
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("could not fill the accept queue of a listening socket")
	return ""
}

func TestConnectTimeout(t *testing.T) {
	addr := blackhole(t)
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			// The connect timeout ends the dial: a Connection error.
			c := newClient(t, addr, s, client.WithConnectTimeout(50*time.Millisecond), client.WithRPCTimeout(5*time.Second))
			start := time.Now()
			_, err := echo(context.Background(), c, &echoArgs{})
			if rpcerr.CodeOf(err) != rpcerr.Connection || time.Since(start) > time.Second {
				t.Fatalf("dial past the connect timeout: %v (code %v) after %v", err, rpcerr.CodeOf(err), time.Since(start))
			}
			// The call's deadline ends it first: a Timeout.
			c2 := newClient(t, addr, s, client.WithConnectTimeout(5*time.Second), client.WithRPCTimeout(50*time.Millisecond))
			start = time.Now()
			_, err = echo(context.Background(), c2, &echoArgs{})
			checkTimeout(t, err, time.Since(start), time.Second)
		})
	}
}
