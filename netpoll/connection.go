//go:build linux || darwin || freebsd

package netpoll

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/internal/deadline"
	"golang.org/x/sys/unix"
)

// connecting values: OnDisconnect waits for OnConnect (see
// EventLoop.disconnected).
const (
	connectNone    = iota // no OnConnect, or it has returned
	connectRunning        // OnConnect is to run or runs
	connectOwed           // and OnDisconnect is to run after it
)

// Connection states.
const (
	stateOpen       = iota
	statePeerClosed // the peer closed its side; input may remain
	stateClosed     // closed locally or by an error
)

// connection implements Connection. Lock order: writeMu, then cbMu.
type connection struct {
	op   fdOperator
	loop *EventLoop                      // nil for dialed connections
	ctx  atomic.Pointer[context.Context] // from OnPrepare/OnConnect; nil means Background

	in  buf.LinkBuffer // written by the poller, read by the handler
	out buf.LinkBuffer // guarded by writeMu while flushing

	state      atomic.Int32
	shut       atomic.Bool           // Close was called: reads fail, whatever input is left
	closeErr   atomic.Pointer[error] // why it closed
	processing atomic.Int32          // 1 while a handler task owns the connection
	connecting atomic.Int32          // connectRunning while OnConnect may run, connectOwed once an OnDisconnect waits for it
	holds      atomic.Int32          // Hold minus Unhold calls
	rseq       atomic.Uint64         // bumped by the poller after each read
	inGuard    atomic.Int32          // 1 while the poller reads or the handler resets in
	waitN      atomic.Int64          // bytes a blocked reader waits for; 0 when none
	readCh     chan struct{}         // wakes a blocked reader
	writeCh    chan struct{}         // wakes a Flush waiting for room
	paused     atomic.Bool           // reading stopped by the input cap
	dialing    atomic.Bool           // connect in progress: events only wake the dialer
	wwaiting   atomic.Bool           // a Flush waits for room (waitWritable)

	rtimer       atomic.Pointer[time.Timer] // the reader's deadline timer, reused; armed by the reader goroutine only, stopped by closed
	rfired       *readAlarm                 // what rtimer sets when it fires; made with rtimer
	rarmed       int64                      // the deadline rtimer is armed for, 0 if none; reader goroutine only
	wtimer       *time.Timer                // the flusher's deadline timer, reused; guarded by writeMu
	rcancel      <-chan struct{}            // SetReadCancel's: a waiting read ends when it closes; nil none; reader goroutine only
	wcancel      <-chan struct{}            // SetWriteCancel's: a Flush waiting for room ends when it closes; nil none; writer goroutine only
	readTimeout  atomic.Int64               // time.Duration
	writeTimeout atomic.Int64               // time.Duration
	readDeadline atomic.Int64               // UnixNano; 0 none
	writeDL      atomic.Int64               // UnixNano; 0 none
	inputCap     int

	writeMu sync.Mutex
	wsegs   [8][]byte     // guarded by writeMu
	wiov    [8]unix.Iovec // guarded by writeMu

	cbMu        sync.Mutex
	callbacks   []func(Connection) error // guarded by cbMu
	idleTimer   *time.Timer              // guarded by cbMu
	idleTimeout time.Duration            // guarded by cbMu
	idleSeq     uint64                   // rseq at the last idle check; guarded by cbMu
	idleTicks   int                      // idle checks in a row without input; guarded by cbMu
	idleStale   int                      // checks of replaced timers still to run; guarded by cbMu
	finished    bool                     // close callbacks ran; guarded by cbMu

	local, remote net.Addr
	processFn     func() // c.process, bound once so dispatch does not allocate
}

func newConnection(fd int, loop *EventLoop, local, remote net.Addr) *connection {
	c := &connection{
		loop:     loop,
		readCh:   make(chan struct{}, 1),
		writeCh:  make(chan struct{}, 1),
		local:    local,
		remote:   remote,
		inputCap: defaultInputCap,
	}
	c.op.fd = fd
	c.op.conn = c
	c.op.closeFD = true
	c.processFn = c.process
	return c
}

// ------------------------------------------------------------- poller side

// onEvent runs on the poller goroutine.
func (c *connection) onEvent(p *poller, ev int) {
	if c.dialing.Load() {
		c.wakeWriter() // the dialer checks SO_ERROR itself
		return
	}
	if c.state.Load() != stateOpen {
		if ev&(evErr|evHup) != 0 {
			// Nothing more to learn from this fd, and epoll reports an error
			// or a hang-up on every wait, asked or not: stop its events. A
			// waiting writer retries and meets the error.
			c.op.detach()
			c.wakeWriter()
		} else if ev&evWrite != 0 {
			c.wakeWriter()
		}
		return
	}
	if ev&(evRead|evHup|evErr) != 0 {
		c.onReadable(p, ev)
	}
	if ev&(evWrite|evErr) != 0 {
		c.wakeWriter()
	}
}

func (c *connection) wakeWriter() {
	select {
	case c.writeCh <- struct{}{}:
	default:
	}
}

func (c *connection) onReadable(p *poller, ev int) {
	// After the peer's close (or an error), read on until EOF so that
	// everything it sent is kept.
	drain := ev&(evHup|evErr) != 0
	for {
		// Backpressure: above the cap, stop reading until the handler
		// drains. After the peer's close, read on: what the socket holds
		// (bounded by the kernel's socket buffers) is all that will come,
		// and the close is recorded once it is read, not when the handler
		// gets below the cap.
		if l := c.in.Len(); l >= c.inputCap && int64(l) >= c.waitN.Load() {
			if ev&evErr != 0 {
				c.peerClosed(ErrConnReset)
				return
			}
			if ev&evHup == 0 {
				c.pauseReading()
				return
			}
		}
		if !c.inGuard.CompareAndSwap(0, 1) {
			// The handler is returning the buffer's memory; the level-triggered
			// event comes back on the next wait.
			return
		}
		if !c.op.acquire() {
			c.inGuard.Store(0)
			return
		}
		segs := c.in.Book(1, p.iov[:0])
		var iov [2]unix.Iovec
		n, errno := readv(c.op.fd, segs, iov[:0])
		if n > 0 {
			c.in.BookAck(n)
			c.in.Flush()
		}
		c.inGuard.Store(0)
		c.op.release()
		switch {
		case n > 0:
			p.reads++
			p.readBytes += int64(n)
			c.rseq.Add(1)
			c.wakeReader()
			c.dispatch()
			if drain {
				continue
			}
			return
		case n == 0 && errno == 0:
			c.peerClosed(ErrPeerClosed)
			return
		case errno == syscall.EAGAIN || errno == syscall.EINTR:
			if drain {
				if ev&evErr != 0 {
					c.peerClosed(ErrConnReset)
				} else {
					c.peerClosed(ErrPeerClosed)
				}
			}
			return
		default:
			c.peerClosed(sysErr("read", errno))
			return
		}
	}
}

// handlerDriven reports whether an OnRequest handler reads the connection;
// otherwise (a dialed connection) its user reads it in a goroutine of its
// own, and the poller must leave the reading side alone.
func (c *connection) handlerDriven() bool { return c.loop != nil && c.loop.cfg.OnRequest != nil }

// dispatch hands the connection to a handler task unless one already owns it.
func (c *connection) dispatch() {
	if !c.handlerDriven() {
		return
	}
	if c.processing.CompareAndSwap(0, 1) {
		c.loop.pool.Go(c.processFn)
	}
}

func (c *connection) wakeReader() {
	if w := c.waitN.Load(); w != 0 && (int64(c.in.Len()) >= w || w < 0) {
		select {
		case c.readCh <- struct{}{}:
		default:
		}
	}
}

// peerClosed records that the peer closed (or reset) the connection. Input
// already read stays readable. A handler-driven connection closes once the
// handler is done with it. A dialed one closes now, but its input is its
// user's: the poller leaves it alone, so a reply followed by the peer's
// close is still read whole, however late the reader comes.
func (c *connection) peerClosed(err error) {
	if c.state.Load() != stateOpen {
		return
	}
	// The reason goes first, so that a reader that sees the state change
	// reads it (not a nil one, which says ErrConnClosed: closed locally). A
	// local close racing with this stores its own reason after its change.
	c.closeErr.CompareAndSwap(nil, &err)
	if !c.state.CompareAndSwap(stateOpen, statePeerClosed) {
		return
	}
	c.op.dropInterest(wantRead | wantHup)
	c.waitN.Store(-1)
	c.wakeReader()
	c.wakeWriter()
	if !c.handlerDriven() {
		c.closeWith(nil)
		return
	}
	c.loop.disconnected(c)
	if c.in.Len() == 0 {
		// Nothing to hand over: close now unless a handler runs or a hold
		// is left; the handler or the last Unhold closes it.
		c.finishIfDone()
		return
	}
	c.dispatch()
}

// pauseReading stops reading the socket while the input is above the cap; a
// reader's resumeReading turns it back on. paused and the read interest change
// together under op.wantMu, so a resume cannot fall between the two and be
// lost. The peer's close is still watched for (wantHup; not on kqueue, where
// it is seen once reading resumes): onReadable then reads the rest and
// records it. Poller goroutine only.
func (c *connection) pauseReading() {
	op := &c.op
	op.wantMu.Lock()
	if !c.paused.Load() {
		c.paused.Store(true)
		op.changeInterestLocked(wantHup, ^wantRead)
	}
	op.wantMu.Unlock()
	// The handler may have drained meanwhile, or a reader may wait for more
	// than the cap.
	if l := c.in.Len(); l < c.inputCap || int64(l) < c.waitN.Load() {
		c.resumeReading()
	}
}

// resumeReading turns reading back on after pauseReading.
func (c *connection) resumeReading() {
	op := &c.op
	op.wantMu.Lock()
	if c.paused.Load() {
		c.paused.Store(false)
		if c.state.Load() == stateOpen {
			op.changeInterestLocked(wantRead, ^wantHup)
		}
	}
	op.wantMu.Unlock()
}

// ------------------------------------------------------------ handler side

// process runs OnRequest while the connection has input the handler consumes.
func (c *connection) process() {
	owns := true // this goroutine owns processing
	defer func() {
		// OnRequest panicked, or called runtime.Goexit (recover gives nil
		// while processing is still owned).
		r := recover()
		if r == nil && !owns {
			return
		}
		why := "netpoll: OnRequest called runtime.Goexit"
		if r != nil {
			// Reported before the close, so that the panic is on record by
			// the time the peer sees the connection end.
			if c.loop != nil {
				c.loop.reportPanic(r)
			}
			why = "netpoll: OnRequest panicked"
		}
		if owns && c.holds.Load() > 0 {
			c.endReading(errors.New(why))
		} else {
			c.closeWith(errors.New(why))
		}
		if owns {
			c.processing.Store(0)
		}
		c.finishIfDone()
	}()
	onRequest := c.loop.cfg.OnRequest
	for {
		seq := c.rseq.Load()
		before := c.in.Len()
		if before > 0 && c.state.Load() != stateClosed && !c.shut.Load() {
			if err := onRequest(c.context(), c); err != nil {
				c.closeWith(err)
			}
		}
		after := c.in.Len()
		if after == 0 {
			c.releaseInput()
		}
		if c.paused.Load() && after < c.inputCap {
			c.resumeReading()
		}
		if after > 0 && after < before && c.state.Load() != stateClosed {
			continue // consumed some and more is there
		}
		c.processing.Store(0)
		owns = false
		if c.state.Load() != stateOpen {
			c.finishIfDone()
			return
		}
		if c.rseq.Load() != seq && c.processing.CompareAndSwap(0, 1) {
			owns = true
			continue // input arrived while we were finishing
		}
		return
	}
}

// endReading ends a held connection whose OnRequest panicked or called
// runtime.Goexit, the caller owning processing: where it stopped reading is
// unknown, so the input is dropped and nothing more is read or served, but
// what the holds owe (replies to calls read before) may still be written:
// it goes on as after the peer's close, and the last Unhold closes it.
func (c *connection) endReading(reason error) {
	c.shut.Store(true) // no OnRequest runs any more, and reads fail
	c.dropInput()
	c.peerClosed(reason)
}

// releaseInput returns the input buffer's memory when it is drained, so an
// idle connection holds none.
func (c *connection) releaseInput() {
	c.in.Release()
	if c.inGuard.CompareAndSwap(0, 1) {
		if c.in.Len() == 0 {
			c.in.Reset()
		}
		c.inGuard.Store(0)
	}
}

// finishHandler closes a connection the peer closed once no handler runs. The
// caller owns processing.
func (c *connection) finishHandler() {
	c.closeWith(nil)
	c.dropInput()
	c.processing.Store(0)
}

// dropInput gives back the memory of input nobody will read. The caller owns
// processing (no handler runs).
func (c *connection) dropInput() {
	c.in.Release()
	if c.inGuard.CompareAndSwap(0, 1) {
		c.in.Reset()
		c.inGuard.Store(0)
	}
}

// finishIfDone finishes a connection that is no longer open once no handler
// runs and, while only the peer has closed, no hold is left. Whoever sees
// the last of these go calls it; when two race, one of them finishes.
func (c *connection) finishIfDone() {
	for c.state.Load() != stateOpen && c.processing.CompareAndSwap(0, 1) {
		if c.holds.Load() == 0 || c.state.Load() == stateClosed {
			c.finishHandler()
			return
		}
		c.processing.Store(0)
		if c.holds.Load() != 0 {
			return // the last Unhold comes here again
		}
	}
}

// Hold keeps a handler-driven connection open for writing after its peer
// has closed, until the matching Unhold.
func (c *connection) Hold() { c.holds.Add(1) }

// Unhold ends a Hold; after the last, a connection the peer closed closes.
// An Unhold without a Hold left to end does nothing: a negative count would
// keep a connection the peer closed open for good, and Shutdown waiting.
func (c *connection) Unhold() {
	for {
		h := c.holds.Load()
		if h <= 0 {
			return
		}
		if c.holds.CompareAndSwap(h, h-1) {
			if h == 1 {
				c.finishIfDone()
			}
			return
		}
	}
}

// ------------------------------------------------------------------ Reader

// Reader returns the nocopy read side (the connection itself).
func (c *connection) Reader() buf.Reader { return c }

// Writer returns the nocopy write side (the connection itself).
func (c *connection) Writer() buf.Writer { return c }

// waitRead blocks until n bytes are readable, the peer closes, the connection
// closes or the read timeout passes.
func (c *connection) waitRead(n int) error {
	if c.in.Len() >= n && !c.shut.Load() {
		return nil
	}
	return c.waitReadSlow(n, 0)
}

// waitReadSlow is waitRead's wait. timeoutAt is when the read timeout ends
// (UnixNano), for a read that waits more than once (Until); 0: it runs from
// now.
func (c *connection) waitReadSlow(n int, timeoutAt int64) error {
	if c.shut.Load() {
		return ErrConnClosed
	}
	c.waitN.Store(int64(n))
	defer c.waitN.CompareAndSwap(int64(n), 0)
	if c.paused.Load() {
		c.resumeReading() // a frame larger than the cap must still arrive
	}
	// The read timeout runs from the start of the read; the deadline may be
	// moved by SetReadDeadline while we wait, so it is read on every turn.
	if timeoutAt == 0 {
		timeoutAt = c.readTimeoutEnd()
	}
	cancel := c.rcancel
	// The timer stays armed across waits for the earliest deadline it was
	// set to: a later deadline (the usual case: each call's is later than
	// the last) needs no Reset; when it fires early the deadline is checked
	// and the timer re-armed. So a blocking read with a deadline usually
	// touches neither the clock nor the timer heap.
	for c.in.Len() < n {
		switch c.state.Load() {
		case stateClosed:
			return c.errClosed()
		case statePeerClosed:
			if c.in.Len() < n {
				return c.errClosed()
			}
		}
		if cancel != nil {
			// Closed already: fail before arming a timer, whatever wake-up
			// the channel below holds.
			select {
			case <-cancel:
				return ErrReadCanceled
			default:
			}
		}
		dl := c.readDeadline.Load()
		if timeoutAt != 0 && (dl == 0 || timeoutAt < dl) {
			dl = timeoutAt
		}
		if dl != 0 && (c.rarmed == 0 || dl < c.rarmed) {
			now := time.Now().UnixNano()
			if now >= dl {
				return errReadTimeout
			}
			if t := c.rtimer.Load(); t == nil {
				c.rfired = &readAlarm{ch: c.readCh}
				c.rtimer.Store(time.AfterFunc(time.Duration(dl-now), c.rfired.ring))
			} else {
				t.Reset(time.Duration(dl - now))
			}
			c.rarmed = dl
			if c.state.Load() == stateClosed {
				// Armed after closed stopped it: stop it here, whether or
				// not this read ends with the close or with its input.
				c.rtimer.Load().Stop()
			}
		}
		// One channel for input and the deadline: a receive costs less
		// than a select over two, which only a read that can be canceled
		// pays.
		if cancel == nil {
			<-c.readCh
		} else {
			select {
			case <-c.readCh:
			case <-cancel:
				return ErrReadCanceled
			}
		}
		if c.rfired != nil && c.rfired.fired.Swap(false) {
			c.rarmed = 0
			if dl != 0 && time.Now().UnixNano() >= dl && c.in.Len() < n {
				return errReadTimeout
			}
		}
	}
	return nil
}

// readAlarm is what a connection's read deadline timer touches when it
// fires: it marks the wake-up as the timer's and wakes the reader. It holds
// only the reader's channel, so a timer armed for a distant deadline does not
// keep a closed connection's buffers alive.
type readAlarm struct {
	ch    chan struct{}
	fired atomic.Bool
}

func (a *readAlarm) ring() {
	a.fired.Store(true)
	select {
	case a.ch <- struct{}{}:
	default:
	}
}

// readTimeoutEnd returns when a read that starts waiting now times out
// (UnixNano), 0 if it does not.
func (c *connection) readTimeoutEnd() int64 {
	if t := c.readTimeout.Load(); t > 0 {
		return afterNow(t)
	}
	return 0
}

// afterNow returns the UnixNano t (> 0) nanoseconds from now, math.MaxInt64
// (in effect never) for a t that would take it past 2262.
func afterNow(t int64) int64 {
	now := time.Now().UnixNano()
	if t > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + t
}

// errClosed says why the connection is closed: ErrConnClosed once Close
// was called, as a net.Conn's says, even if the peer closed it first;
// otherwise the peer's close, the reset or the failure that closed it.
func (c *connection) errClosed() error {
	if c.shut.Load() {
		return ErrConnClosed
	}
	if p := c.closeErr.Load(); p != nil && *p != nil {
		return *p
	}
	return ErrConnClosed
}

// Next returns the next n bytes, waiting for them if needed.
func (c *connection) Next(n int) ([]byte, error) {
	if err := c.waitRead(n); err != nil {
		return nil, err
	}
	return c.in.Next(n)
}

// Peek returns the next n bytes without consuming them, waiting if needed.
func (c *connection) Peek(n int) ([]byte, error) {
	if err := c.waitRead(n); err != nil {
		return nil, err
	}
	return c.in.Peek(n)
}

// Skip consumes n bytes, waiting for them if needed.
func (c *connection) Skip(n int) error {
	if err := c.waitRead(n); err != nil {
		return err
	}
	return c.in.Skip(n)
}

// Until returns the bytes through the next delim, waiting for it. It waits
// for at most the input cap: a peer that sends that much without the
// delimiter gets an error wrapping buf.ErrDelimNotFound, and the bytes stay
// unread. The read timeout bounds the whole call, from its first wait,
// however many pieces arrive without the delimiter.
func (c *connection) Until(delim byte) ([]byte, error) {
	if c.shut.Load() {
		return nil, ErrConnClosed
	}
	var timeoutAt int64 // the read timeout's end, set at the first wait
	for searched := 0; ; {
		// The length is read before the search: the poller may append
		// while it runs, and what it appends after this has not been
		// searched.
		l := c.in.Len()
		if i := c.in.IndexByte(delim, searched); i >= 0 {
			return c.in.Next(i + 1)
		}
		searched = l
		if searched >= c.inputCap {
			return nil, fmt.Errorf("netpoll: Until: no %q in the %d bytes read, which reach the input cap (%d): %w",
				delim, searched, c.inputCap, buf.ErrDelimNotFound)
		}
		if c.in.Len() > searched && !c.shut.Load() {
			continue // more came during the search
		}
		if timeoutAt == 0 {
			timeoutAt = c.readTimeoutEnd()
		}
		if err := c.waitReadSlow(searched+1, timeoutAt); err != nil {
			return nil, err
		}
	}
}

// ReadByte returns the next byte, waiting for it.
func (c *connection) ReadByte() (byte, error) {
	if err := c.waitRead(1); err != nil {
		return 0, err
	}
	return c.in.ReadByte()
}

// ReadString returns a copy of the next n bytes as a string.
func (c *connection) ReadString(n int) (string, error) {
	if err := c.waitRead(n); err != nil {
		return "", err
	}
	return c.in.ReadString(n)
}

// ReadBinary returns a copy of the next n bytes.
func (c *connection) ReadBinary(n int) ([]byte, error) {
	if err := c.waitRead(n); err != nil {
		return nil, err
	}
	return c.in.ReadBinary(n)
}

// Slice returns the next n bytes as a Reader sharing the input's memory.
func (c *connection) Slice(n int) (buf.Reader, error) {
	if err := c.waitRead(n); err != nil {
		return nil, err
	}
	return c.in.Slice(n)
}

// Release gives back the memory of the input read so far (all of it once the
// input is drained, or once a handler-driven connection is closed).
func (c *connection) Release() error {
	if c.state.Load() == stateClosed && c.handlerDriven() {
		// Nobody reads on after the handler: the input is dropped by
		// whoever owns processing, the handler when it ends or, when none
		// runs (a Release from another goroutine after the close), this
		// call. Touching the input otherwise would race with that.
		c.finishIfDone()
		return nil
	}
	if c.in.Len() == 0 {
		c.releaseInput()
		return nil
	}
	return c.in.Release()
}

// Len returns the number of readable bytes without waiting.
func (c *connection) Len() int { return c.in.Len() }

// Read implements net.Conn: it waits for at least one byte. A Read into an
// empty p waits for nothing; it fails only once Close was called. Once the
// peer's clean close has been read up to, it returns io.EOF itself, as
// io.Reader's contract asks (callers compare with ==), not ErrPeerClosed,
// which the Reader methods return. Read copies into p and then releases
// the input read so far, as Release does: slices taken with the Reader's
// Next, Peek or Until stop being valid at a Read (as bufio.Reader's Peek
// at its next read), so copy them first. (Keeping them instead made a
// connection read once with Peek and then with Read alone keep every
// byte its peer sent.)
func (c *connection) Read(p []byte) (int, error) {
	if len(p) == 0 {
		if c.shut.Load() {
			return 0, ErrConnClosed
		}
		return 0, nil
	}
	if err := c.waitRead(1); err != nil {
		if err == ErrPeerClosed {
			return 0, io.EOF
		}
		return 0, err
	}
	n, err := c.in.Read(p)
	c.Release()
	return n, err
}

// ------------------------------------------------------------------ Writer

// Malloc returns n writable bytes of the output buffer.
func (c *connection) Malloc(n int) ([]byte, error) { return c.out.Malloc(n) }

// MallocLen returns the bytes written since the last Flush.
func (c *connection) MallocLen() int { return c.out.MallocLen() }

// MallocAck keeps the first n bytes written since the last Flush.
func (c *connection) MallocAck(n int) error { return c.out.MallocAck(n) }

// WriteByte appends one byte to the output.
func (c *connection) WriteByte(b byte) error { return c.out.WriteByte(b) }

// WriteString appends s to the output (linked, not copied, when large).
func (c *connection) WriteString(s string) (int, error) { return c.out.WriteString(s) }

// WriteBinary appends p to the output (linked, not copied, when large).
func (c *connection) WriteBinary(p []byte) (int, error) { return c.out.WriteBinary(p) }

// WriteDirect links p into the output before the last remainCap bytes of the
// last Malloc.
func (c *connection) WriteDirect(p []byte, remainCap int) error {
	return c.out.WriteDirect(p, remainCap)
}

// Append moves the readable bytes of w (a *buf.LinkBuffer) to the output.
func (c *connection) Append(w buf.Writer) error { return c.out.Append(w) }

// Flush sends everything written since the last Flush.
func (c *connection) Flush() error {
	c.writeMu.Lock()
	_, err := c.flushLocked()
	c.writeMu.Unlock()
	return err
}

// Write implements net.Conn: it sends p before returning. Cut short (a
// deadline, a close), it returns with the error how many bytes of p went
// out.
func (c *connection) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	queued := c.out.MallocLen() + c.out.Len() // written before p, sent first
	d, _ := c.out.Malloc(len(p))
	copy(d, p)
	if sent, err := c.flushLocked(); err != nil {
		return min(max(sent-queued, 0), len(p)), err
	}
	return len(p), nil
}

// flushLocked sends the output and returns how many bytes went out.
func (c *connection) flushLocked() (int, error) {
	if c.state.Load() == stateClosed {
		c.out.Reset()
		return 0, c.errClosed()
	}
	c.out.Flush()
	sent := 0
	var timeoutAt int64 // WriteTimeout's end, from the Flush's first wait
	for c.out.Len() > 0 {
		if !c.op.acquire() {
			c.out.Release()
			c.out.Reset()
			return sent, c.errClosed()
		}
		segs := c.out.Segments(c.wsegs[:0], len(c.wsegs))
		n, errno := writev(c.op.fd, segs, c.wiov[:0])
		c.op.release()
		if n > 0 {
			c.out.Skip(n)
			sent += n
		}
		switch {
		case errno == 0:
		case errno == syscall.EAGAIN:
			if timeoutAt == 0 {
				if t := c.writeTimeout.Load(); t > 0 {
					timeoutAt = afterNow(t)
				}
			}
			if err := c.waitWritable(timeoutAt); err != nil {
				if err == ErrWriteCanceled {
					err = fmt.Errorf("%w (%d of %d bytes had gone out, the rest was dropped)", err, sent, sent+c.out.Len())
				}
				c.out.Release()
				c.out.Reset()
				return sent, err
			}
		case errno == syscall.EINTR:
		default:
			err := sysErr("write", errno)
			c.readRest()
			c.closeWith(err)
			c.out.Release()
			c.out.Reset()
			return sent, err
		}
	}
	c.out.Release()
	c.out.Reset()
	return sent, nil
}

// readRest reads into the input of a dialed connection what its socket
// holds, without waiting, before a failed write closes it: a peer that
// answers and then resets the connection (closing with input unread) makes
// the write fail, maybe before the poller has read the answer, which the
// close would lose; the answer often says why (a request refused for its
// size). Up to the input cap. Error path only.
func (c *connection) readRest() {
	if c.handlerDriven() {
		return
	}
	// The poller may be reading (or the reader returning memory): a
	// non-blocking read's worth of time. What it reads, it keeps.
	for !c.inGuard.CompareAndSwap(0, 1) {
		runtime.Gosched()
	}
	defer c.inGuard.Store(0)
	if !c.op.acquire() {
		return
	}
	defer c.op.release()
	var segs [4][]byte
	var iov [4]unix.Iovec
	for c.in.Len() < c.inputCap {
		n, _ := readv(c.op.fd, c.in.Book(1, segs[:0]), iov[:0])
		if n <= 0 {
			return
		}
		c.in.BookAck(n)
		c.in.Flush()
		c.rseq.Add(1)
	}
}

// waitWritable waits for room in the socket's send buffer, until timeoutAt
// (UnixNano; 0 none), the write deadline or the close of the SetWriteCancel
// channel. SetWriteDeadline wakes it: the caller retries the write and,
// still blocked, waits again under the new deadline.
func (c *connection) waitWritable(timeoutAt int64) error {
	cancel := c.wcancel
	if cancel != nil {
		// Closed already: fail before waiting, whatever wake-up writeCh holds.
		select {
		case <-cancel:
			return ErrWriteCanceled
		default:
		}
	}
	if err := c.op.addInterest(wantWrite); err != nil {
		return c.errClosed()
	}
	defer c.op.dropInterest(wantWrite)
	c.wwaiting.Store(true) // before the deadline is read; see SetWriteDeadline
	defer c.wwaiting.Store(false)
	var timeout <-chan time.Time
	dl := c.writeDL.Load()
	if timeoutAt != 0 && (dl == 0 || timeoutAt < dl) {
		dl = timeoutAt
	}
	if dl != 0 {
		d := time.Duration(dl - time.Now().UnixNano())
		if d <= 0 {
			return errWriteTimeout
		}
		if c.wtimer == nil {
			c.wtimer = time.NewTimer(d)
		} else {
			c.wtimer.Reset(d)
		}
		defer c.wtimer.Stop()
		timeout = c.wtimer.C
	}
	select {
	case <-c.writeCh:
		if c.state.Load() == stateClosed {
			return c.errClosed()
		}
		return nil
	case <-timeout:
		return errWriteTimeout
	case <-cancel: // nil, never ready, when none is set
		return ErrWriteCanceled
	}
}

// ------------------------------------------------------------- net.Conn etc.

// IsActive reports whether the connection is open and the peer has not closed
// it.
func (c *connection) IsActive() bool { return c.state.Load() == stateOpen }

// Close closes the connection; it is safe to call more than once. Another
// goroutine blocked reading it returns an error, and so does every read
// after it (ErrConnClosed), as a net.Conn's does, even with input left.
func (c *connection) Close() error {
	c.shut.Store(true)
	c.closeWith(nil)
	// A handler-driven connection gives back its input when no handler holds
	// it. A dialed connection's reader may be running now: its input goes back
	// at the reader's next Release.
	if c.handlerDriven() && c.processing.CompareAndSwap(0, 1) {
		c.dropInput()
		c.processing.Store(0)
	}
	return nil
}

// closeWith closes the connection, recording why (nil: closed locally).
func (c *connection) closeWith(reason error) {
	for {
		s := c.state.Load()
		if s == stateClosed {
			return
		}
		if c.state.CompareAndSwap(s, stateClosed) {
			if reason == nil && s == stateOpen {
				reason = ErrConnClosed
			}
			if reason != nil && (s == stateOpen || c.closeErr.Load() == nil) {
				c.closeErr.Store(&reason)
			}
			if s == stateOpen && c.loop != nil {
				c.loop.disconnected(c)
			}
			break
		}
	}
	c.closed()
}

// closed does what follows the change to stateClosed, once, by whoever made
// it: it wakes the waiters, takes the fd out of its poller and drops the
// open reference, forgets the connection and runs the close callbacks.
func (c *connection) closed() {
	c.waitN.Store(-1)
	c.wakeReader()
	c.wakeWriter()
	// An armed timer stays in the runtime's heap until it fires, which for a
	// distant deadline may be never. A reader that arms it after this sees
	// the close when it has and stops it itself.
	if t := c.rtimer.Load(); t != nil {
		t.Stop()
	}
	c.op.detach()
	c.op.release() // the open reference: the fd closes when the last user is done
	if c.loop != nil {
		c.loop.forget(c)
	}
	c.runCloseCallbacks()
}

func (c *connection) runCloseCallbacks() {
	c.cbMu.Lock()
	if c.finished {
		c.cbMu.Unlock()
		return
	}
	c.finished = true
	cbs := c.callbacks
	c.callbacks = nil
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	c.cbMu.Unlock()
	for i := len(cbs) - 1; i >= 0; i-- {
		cbs[i](c)
	}
}

// AddCloseCallback registers f to run once after the connection closes (at
// once if it already has). Callbacks run in reverse order of registration.
func (c *connection) AddCloseCallback(f func(Connection) error) error {
	if f == nil {
		return errors.New("netpoll: AddCloseCallback: nil callback")
	}
	c.cbMu.Lock()
	if c.finished {
		c.cbMu.Unlock()
		f(c)
		return nil
	}
	c.callbacks = append(c.callbacks, f)
	c.cbMu.Unlock()
	return nil
}

// LocalAddr returns the local address.
func (c *connection) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the peer's address.
func (c *connection) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets the read and write deadlines. On a closed connection it
// is an error (why it closed), as are the two below.
func (c *connection) SetDeadline(t time.Time) error {
	if c.state.Load() == stateClosed {
		return c.errClosed()
	}
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the deadline of blocking reads; zero means none, and
// so in effect does a time after 2262; any time before now has passed.
func (c *connection) SetReadDeadline(t time.Time) error {
	if c.state.Load() == stateClosed {
		return c.errClosed()
	}
	c.readDeadline.Store(deadline.UnixNano(t))
	c.wakeReaderForDeadline()
	return nil
}

// SetWriteDeadline sets the deadline of blocking flushes; zero means none,
// and so in effect does a time after 2262; any time before now has passed.
func (c *connection) SetWriteDeadline(t time.Time) error {
	if c.state.Load() == stateClosed {
		return c.errClosed()
	}
	c.writeDL.Store(deadline.UnixNano(t))
	if c.wwaiting.Load() {
		c.wakeWriter() // a Flush waiting for room re-reads the deadline
	}
	return nil
}

func (c *connection) wakeReaderForDeadline() {
	if c.waitN.Load() != 0 {
		select {
		case c.readCh <- struct{}{}:
		default:
		}
	}
}

// negativeTimeout is the error of a timeout setter given a negative d,
// which leaves the timeout as it was.
func negativeTimeout(method string, d time.Duration) error {
	return fmt.Errorf("netpoll: %s(%v): negative timeout (0 means no limit)", method, d)
}

// SetReadCancel makes a read that must wait end with ErrReadCanceled once
// done is closed; nil clears it. A plain field: the reader goroutine sets
// it (or one with a happens-before edge to its reads), and waitReadSlow
// reads it once per wait.
func (c *connection) SetReadCancel(done <-chan struct{}) { c.rcancel = done }

// SetWriteCancel makes a Flush (or Write) waiting for room in the socket
// end with ErrWriteCanceled once done is closed; nil clears it. A plain
// field: the goroutine that flushes sets it (or one with a happens-before
// edge to its flushes), and waitWritable reads it once per wait.
func (c *connection) SetWriteCancel(done <-chan struct{}) { c.wcancel = done }

// SetReadTimeout bounds each blocking read; 0 means no limit.
func (c *connection) SetReadTimeout(d time.Duration) error {
	if d < 0 {
		return negativeTimeout("SetReadTimeout", d)
	}
	c.readTimeout.Store(int64(d))
	return nil
}

// SetWriteTimeout bounds each Flush that waits for the socket, from its first
// wait to its end (however many waits); 0 means no limit.
func (c *connection) SetWriteTimeout(d time.Duration) error {
	if d < 0 {
		return negativeTimeout("SetWriteTimeout", d)
	}
	c.writeTimeout.Store(int64(d))
	return nil
}

// SetIdleTimeout closes the connection after d without input; 0 turns it off.
func (c *connection) SetIdleTimeout(d time.Duration) error {
	if d < 0 {
		return negativeTimeout("SetIdleTimeout", d)
	}
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	if c.finished {
		return c.errClosed()
	}
	c.idleTimeout = d
	if c.idleTimer != nil {
		if !c.idleTimer.Stop() {
			// Its check has fired and waits for cbMu: it is not one of
			// the new timeout's.
			c.idleStale++
		}
		c.idleTimer = nil
	}
	if d > 0 {
		c.idleSeq, c.idleTicks = c.rseq.Load(), 0
		c.idleTimer = time.AfterFunc(idleCheckEvery(d), c.checkIdle)
	}
	return nil
}

// minIdleCheck is the shortest period of the idle checks: a timeout of a
// few nanoseconds must not re-arm its timer at once, over and over, while
// the connection is busy.
const minIdleCheck = time.Millisecond

// idleCheckEvery returns the period of the idle checks for timeout d.
func idleCheckEvery(d time.Duration) time.Duration { return max(d/2, minIdleCheck) }

// checkIdle runs every half idle timeout (every minIdleCheck at least) and
// closes the connection after two checks in a row without input (no read
// between them) and without a busy handler: the connection closes after
// between one and one and a half idle timeouts without input (2 to 3 ms for
// a timeout under 2 ms). A handler that only waits for input (the rest of
// a request the peer stopped sending) is not busy. Reads only bump a
// counter; no clock is read and no timer touched per read.
func (c *connection) checkIdle() {
	c.cbMu.Lock()
	if c.idleStale > 0 {
		// The check of a timer SetIdleTimeout replaced. (Should the
		// current timer's check get here first, it stands in for that
		// one, which then counts and re-arms the timer in its place.)
		c.idleStale--
		c.cbMu.Unlock()
		return
	}
	d := c.idleTimeout
	if c.finished || d <= 0 || c.idleTimer == nil {
		c.cbMu.Unlock()
		return
	}
	// Busy: a handler runs (not merely waiting for input), or work the
	// connection owes a reply to holds it (Hold, which a dialed connection
	// ignores).
	busy := (c.processing.Load() != 0 && c.waitN.Load() <= 0) || (c.holds.Load() > 0 && c.handlerDriven())
	if seq := c.rseq.Load(); seq != c.idleSeq || busy {
		c.idleSeq, c.idleTicks = seq, 0
	} else {
		c.idleTicks++
	}
	if c.idleTicks < 2 {
		c.idleTimer.Reset(idleCheckEvery(d))
		c.cbMu.Unlock()
		return
	}
	c.cbMu.Unlock()
	err := error(&timeoutError{op: "idle connection"})
	c.closeWith(err)
}

// context returns the connection's context (set by OnPrepare and OnConnect).
func (c *connection) context() context.Context {
	if p := c.ctx.Load(); p != nil {
		return *p
	}
	return context.Background()
}

func (c *connection) setContext(ctx context.Context) {
	if ctx != nil {
		c.ctx.Store(&ctx)
	}
}
