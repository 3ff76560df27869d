package rpcerr_test

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestCodeOfNetworkErrors: a network error that is not a Petrel *Error (a
// middleware's or a handler's own dial or connection, passed on as it came)
// is a Connection error, not an Internal one (a bug in Petrel or the
// handler): retry policies and circuit breakers read the code. A network
// timeout stays a Timeout.
func TestCodeOfNetworkErrors(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	cases := []struct {
		err  error
		want rpcerr.Code
	}{
		{refused, rpcerr.Connection},
		{fmt.Errorf("calling the backend: %w", reset), rpcerr.Connection},
		{fmt.Errorf("writing: %w", net.ErrClosed), rpcerr.Connection},
		{syscall.EPIPE, rpcerr.Connection},
		{timeout, rpcerr.Timeout},
	}
	for _, c := range cases {
		if got := rpcerr.CodeOf(c.err); got != c.want {
			t.Errorf("CodeOf(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
