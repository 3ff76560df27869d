package client

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// pastDeadline is a read deadline in the past: storing it ends a blocked
// read with a timeout.
var pastDeadline = time.Unix(1, 0)

// pconn is a connection of the short and long pools: one call at a time,
// whose caller writes the request and reads the reply itself.
type pconn struct {
	conn netpoll.Connection
	addr string

	// fired records that the call's context was canceled during the wait
	// (the read deadline was moved into the past); the connection is then
	// closed, never reused (a late reply may follow).
	fired atomic.Bool

	// idleSince is when the connection was given back; guarded by the long
	// pool's mutex.
	idleSince time.Time
}

func newPconn(conn netpoll.Connection, addr string) *pconn {
	return &pconn{conn: conn, addr: addr}
}

// expire ends the current wait: it runs from context.AfterFunc when the
// call's context is canceled.
func (pc *pconn) expire() {
	pc.fired.Store(true)
	pc.conn.SetReadDeadline(pastDeadline)
	pc.conn.SetWriteDeadline(pastDeadline)
}

// arm starts the wait of one call: the connection's deadlines become the
// call's (zero: none), and a cancelable ctx ends the wait when canceled.
// It returns the function that must be called when the wait is over (nil
// when ctx cannot be canceled), and reports false when the deadline passed
// already.
//
// The read deadline is netpoll's: a read that must wait arms a timer there.
// (A per-connection timer Reset per call would cost nothing, but netpoll does
// not yet re-read a deadline changed while a reader waits; see
// /tmp/petrel/rpc-design-changes.md.)
func (pc *pconn) arm(ctx context.Context, deadline time.Time) (stop func() bool, ok bool) {
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return nil, false
	}
	pc.conn.SetReadDeadline(deadline)
	pc.conn.SetWriteDeadline(deadline)
	if ctx.Done() != nil {
		// A cancelable context costs context.AfterFunc's allocations.
		stop = context.AfterFunc(ctx, pc.expire)
	}
	return stop, true
}

// disarm ends the wait begun by arm and reports whether the connection may
// be reused: false when the context's cancellation fired.
func (pc *pconn) disarm(stop func() bool) bool {
	if stop != nil && !stop() {
		return false
	}
	return !pc.fired.Load()
}

func (pc *pconn) close() { pc.conn.Close() }

// dialer opens connections for the pools.
type dialer struct {
	network string
	timeout time.Duration // connect timeout; 0: none
}

// dial connects to addr before the earlier of the connect timeout and the
// call's deadline. A dial cut short by the call's deadline is a Timeout
// error; any other failure, the connect timeout included, a Connection
// error.
func (d *dialer) dial(ctx context.Context, addr string, deadline time.Time) (netpoll.Connection, error) {
	timeout := d.timeout
	byCall := false
	if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, rpcerr.New(rpcerr.Timeout, "the call's deadline passed before dialing "+addr)
		}
		if timeout == 0 || left < timeout {
			timeout, byCall = left, true
		}
	}
	nd := netpoll.Dialer{Timeout: timeout}
	conn, err := nd.DialContext(ctx, d.network, addr)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxError(ctxErr, "dialing "+addr)
		}
		if byCall && netpoll.IsTimeout(err) {
			return nil, rpcerr.Wrap(rpcerr.Timeout, err, "the call's deadline passed while dialing "+addr)
		}
		return nil, rpcerr.Wrap(rpcerr.Connection, err, "dialing "+addr)
	}
	return conn, nil
}

// ctxError turns a context's error into the error model.
func ctxError(err error, what string) error {
	if err == context.DeadlineExceeded {
		return rpcerr.Wrap(rpcerr.Timeout, err, what)
	}
	return rpcerr.Wrap(rpcerr.Canceled, err, what)
}
