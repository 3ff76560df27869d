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
	"github.com/petrel-rpc/petrel/transport"
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

// TestMuxDialWaitBoundedByCall: a multiplexed call that finds another
// caller dialing its connection slot waits for that dial only within its
// own deadline, and stops waiting when its context is canceled.
func TestMuxDialWaitBoundedByCall(t *testing.T) {
	addr := blackhole(t)
	c := newClient(t, addr, setup{proto: transport.TTHeader, pool: client.WithMuxConnection(1)},
		client.WithConnectTimeout(2*time.Second), client.WithRPCTimeout(0))
	first := make(chan error, 1)
	go func() {
		_, err := echo(context.Background(), c, &echoArgs{})
		first <- err
	}()
	// Let the first call start its dial (if this call went first instead,
	// it would only dial itself, within its deadline).
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	_, err := echo(context.Background(), c, &echoArgs{}, client.WithCallTimeout(50*time.Millisecond))
	checkTimeout(t, err, time.Since(start), time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	_, err = echo(ctx, c, &echoArgs{})
	if rpcerr.CodeOf(err) != rpcerr.Canceled || time.Since(start) > time.Second {
		t.Fatalf("canceled while another call dials: %v (code %v) after %v", err, rpcerr.CodeOf(err), time.Since(start))
	}
	if err := <-first; rpcerr.CodeOf(err) != rpcerr.Connection {
		t.Fatalf("the dialing call: %v, want its connect timeout", err)
	}
}
