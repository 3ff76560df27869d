package netpoll

import (
	"net"
	"time"

	"github.com/petrel-rpc/petrel/buf"
)

// Connection is a network connection with nocopy buffers. It implements
// net.Conn; its Reader and Writer give the nocopy API.
//
// The Reader side blocks until enough bytes arrive (or the read timeout, the
// peer's close, a local Close or the close of the SetReadCancel channel);
// what the peer sent before closing stays readable until a local Close,
// after which every read fails with ErrConnClosed. Reader methods must not
// be called from two goroutines at once, nor Writer methods. Flush writes
// everything queued and blocks only while the socket is full (up to the
// write timeout, or the close of the SetWriteCancel channel).
type Connection interface {
	net.Conn
	// Reader returns the nocopy read side. Its slices stay valid until its
	// Release, or until a Read (net.Conn's), which releases too.
	Reader() buf.Reader
	// Writer returns the nocopy write side.
	Writer() buf.Writer
	// IsActive reports whether the connection is open and the peer has not
	// closed it. It does no I/O.
	IsActive() bool
	// SetReadTimeout bounds each blocking read; 0 means no limit. A
	// negative d is an error and changes nothing; so for the two below.
	SetReadTimeout(d time.Duration) error
	// SetReadCancel makes a later read that must wait for input end with
	// ErrReadCanceled as soon as done is closed; with done closed already,
	// such a read fails at once, while a read the buffered input satisfies
	// still succeeds. It applies to every later read until changed; nil
	// (the default) clears it. A canceled read consumes nothing, and the
	// connection stays open: closing it, or reading on, is the caller's
	// choice. Call it from the goroutine that reads, or with a
	// happens-before edge to that goroutine's reads (a lock, a channel),
	// not while a read waits.
	SetReadCancel(done <-chan struct{})
	// SetWriteCancel is SetReadCancel's counterpart for writes: a later
	// Flush (or Write) that must wait for room in the socket ends with an
	// error wrapping ErrWriteCanceled as soon as done is closed, or at
	// once if it is closed already, while one the socket takes without
	// waiting still succeeds. It applies to every later Flush until
	// changed; nil (the default) clears it. The output not yet sent is
	// dropped, so the peer may have part of a message: the connection
	// stays open, but closing it is usually the caller's choice. Call it
	// from the goroutine that flushes, or with a happens-before edge to
	// its flushes, not while a Flush waits.
	SetWriteCancel(done <-chan struct{})
	// SetWriteTimeout bounds each Flush that must wait for the socket, from
	// its first wait to its end; 0 means no limit.
	SetWriteTimeout(d time.Duration) error
	// SetIdleTimeout closes the connection after d without input (at
	// least 2 ms); 0 means never.
	SetIdleTimeout(d time.Duration) error
	// AddCloseCallback registers f to run once after the connection closes,
	// on the goroutine that closes it, which may be a poller's: f must not
	// block. Callbacks run newest first; one added after the close runs at
	// once. A nil f is an error.
	AddCloseCallback(f func(Connection) error) error
	// Hold keeps a connection of an EventLoop open for writing after the
	// peer has closed its side, until the matching Unhold. Without holds
	// such a connection closes as soon as OnRequest returns; an OnRequest
	// that hands requests to other goroutines holds the connection for
	// each, from OnRequest, so that their replies still reach a peer that
	// shut down only its sending side. Shutdown counts a held connection
	// as busy, and so does the idle timeout; a local Close does not wait
	// for holds. An OnRequest that panics or calls runtime.Goexit ends the
	// reading of a held connection (its input is dropped), which stays
	// open for writing until the last Unhold, as after the peer's close.
	// It has no effect on dialed connections.
	Hold()
	// Unhold ends a Hold; one without a Hold left to end does nothing.
	Unhold()
}

// defaultInputCap is the input a connection buffers before reading pauses.
const defaultInputCap = 4 << 20
