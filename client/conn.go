package client

import (
	"context"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// pconn is a connection of the short and long pools: one call at a time,
// whose caller writes the request and reads the reply itself.
type pconn struct {
	conn netpoll.Connection
	addr string

	// taken is when the long pool handed the connection out (zero from the
	// short pool): the clock read that checked it for idleness serves for the
	// call's deadline check (arm) and, when it comes back, as the start of
	// its idleness. That counts a call's time as idle, so a connection is
	// kept idle for at most MaxIdleTimeout, a little less after a long call,
	// never more, and costs no clock read.
	taken time.Time

	// idleSince is when the connection was last taken, once it is back in
	// the long pool; guarded by the pool's mutex.
	idleSince time.Time
}

func newPconn(conn netpoll.Connection, addr string) *pconn {
	return &pconn{conn: conn, addr: addr}
}

// arm gives the connection the call's deadline (zero: none) for its write
// and its read, and reports false when the deadline passed already.
//
// The deadline is netpoll's: a read that must wait arms a timer there (two
// allocations). The call's context is watched by the write and the read
// themselves: callPooled gives the connection ctx.Done() (netpoll's
// SetWriteCancel and SetReadCancel), so a cancellation ends a Flush
// waiting for room in the socket, or the wait for the reply, at once, with
// no goroutine and no allocation (context.AfterFunc would cost three per
// call).
func (pc *pconn) arm(deadline time.Time) bool {
	if !deadline.IsZero() {
		now := pc.taken
		if now.IsZero() {
			now = time.Now()
		}
		if !now.Before(deadline) {
			return false
		}
	}
	pc.conn.SetReadDeadline(deadline)
	pc.conn.SetWriteDeadline(deadline)
	return true
}

func (pc *pconn) close() { pc.conn.Close() }

// dialer opens connections for the pools.
type dialer struct {
	network string
	timeout time.Duration   // connect timeout; 0: none
	closing context.Context // canceled by the client's Close, which ends dials in progress; nil: none
}

// dial connects to addr before the earlier of the connect timeout and the
// call's deadline. A dial cut short by the call's deadline is a Timeout
// error; any other failure, the connect timeout included (its error says
// so, with its value), a Connection error. The client's Close ends it,
// and so does the end of ctx, the attempt's, when the dial is the call's
// own (own; a multiplexed slot's is shared by the calls waiting for it).
func (d *dialer) dial(ctx context.Context, addr string, deadline time.Time, own bool) (netpoll.Connection, error) {
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
	// Not ctx itself: the call's context reports the call's deadline but
	// is not done at it (the client enforces it), and a context derived
	// from it would wait for that. The caller's own context is honest;
	// ctx's end is linked in.
	dctx, cancel := context.WithCancel(outliving(ctx))
	defer cancel()
	if own {
		defer context.AfterFunc(ctx, cancel)()
	}
	if d.closing != nil {
		defer context.AfterFunc(d.closing, cancel)()
	}
	conn, err := nd.DialContext(dctx, d.network, addr)
	if err != nil {
		if d.closing != nil && d.closing.Err() != nil {
			return nil, connError(errClientClosed, "dialing "+addr)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxError(ctxErr, "dialing "+addr)
		}
		if byCall && netpoll.IsTimeout(err) {
			return nil, rpcerr.Wrap(rpcerr.Timeout, err, "the call's deadline passed while dialing "+addr)
		}
		if timeout > 0 && netpoll.IsTimeout(err) {
			return nil, rpcerr.Wrap(rpcerr.Connection, err, "dialing "+addr+" (connect timeout "+timeout.String()+")")
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
