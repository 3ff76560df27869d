package netpoll

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

var (
	// ErrConnClosed reports use of a connection after it was closed locally.
	ErrConnClosed = errors.New("netpoll: connection closed")
	// ErrPeerClosed reports that the peer closed the connection; it wraps io.EOF.
	ErrPeerClosed = fmt.Errorf("netpoll: connection closed by peer: %w", io.EOF)
	// ErrConnReset reports that the peer reset the connection.
	ErrConnReset = fmt.Errorf("netpoll: connection reset by peer: %w", syscall.ECONNRESET)
	// ErrLoopClosed reports use of an event loop after Shutdown.
	ErrLoopClosed = errors.New("netpoll: event loop shut down")
	// ErrReadCanceled reports a read that ended, without the input it waited
	// for, because the channel given to SetReadCancel closed. The connection
	// stays open.
	ErrReadCanceled = errors.New("netpoll: read canceled: the channel given to SetReadCancel closed before the input the read waited for came")
	// ErrWriteCanceled reports a Flush (or Write) that ended, with part of
	// its output unsent, because the channel given to SetWriteCancel closed
	// while it waited for room in the socket. The error returned wraps it
	// and says how many bytes had gone out; the rest is dropped. The
	// connection stays open, but a message protocol's stream is then out
	// of step.
	ErrWriteCanceled = errors.New("netpoll: write canceled: the channel given to SetWriteCancel closed while the Flush waited for room in the socket")
	// ErrUnsupported reports a platform without epoll or kqueue.
	ErrUnsupported = errors.New("netpoll: no epoll or kqueue on this platform")
)

// timeoutError is returned when a read, write or dial deadline passes. It
// satisfies net.Error with Timeout() true, and errors.Is matches it with
// errTimeout and, for a deadline (not the idle timeout's close), with
// os.ErrDeadlineExceeded, as net.Conn's contract asks.
type timeoutError struct {
	op       string
	deadline bool // a read, write or dial deadline or timeout passed
}

func (e *timeoutError) Error() string   { return "netpoll: " + e.op + " timed out" }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }
func (e *timeoutError) Is(target error) bool {
	return target == errTimeout || (e.deadline && target == os.ErrDeadlineExceeded)
}

// errTimeout matches every timeout error with errors.Is; exported through
// IsTimeout.
var errTimeout = errors.New("netpoll: timeout")

// IsTimeout reports whether err is a netpoll timeout.
func IsTimeout(err error) bool { return errors.Is(err, errTimeout) }

var (
	errReadTimeout  = &timeoutError{op: "read", deadline: true}
	errWriteTimeout = &timeoutError{op: "write", deadline: true}
	errDialTimeout  = &timeoutError{op: "dial", deadline: true}
)

// sysErr turns a failed system call into an error that says what happened.
func sysErr(op string, errno syscall.Errno) error {
	switch errno {
	case syscall.ECONNRESET:
		return ErrConnReset
	case syscall.EPIPE:
		return fmt.Errorf("netpoll: %s: peer closed the connection: %w", op, errno)
	}
	return fmt.Errorf("netpoll: %s: %w", op, errno)
}
