package client

import (
	"context"
	"errors"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// muxPool keeps a few shared connections per address (WithMuxConnection).
type muxPool struct {
	d            *dialer
	size         int
	maxSize      int           // largest reply frame
	writeTimeout time.Duration // bounds a flush stalled by a full socket; 0: none

	mu     sync.RWMutex
	addrs  map[string]*muxSlots  // guarded by mu
	live   map[*muxConn]struct{} // every connection whose reader runs; guarded by mu
	closed bool                  // guarded by mu
	// kept: the addresses discovery lists (option_discovery.go); nil:
	// every address. Guarded by mu.
	kept map[string]struct{}
}

// muxSlots are the connections to one address.
type muxSlots struct {
	next  atomic.Uint32
	conns []atomic.Pointer[muxConn]
	// dial holds one lock per slot (a token in a channel of capacity 1,
	// so that a caller waits for it within its deadline): a single dial
	// replaces a broken connection.
	dial []chan struct{}
}

// lockDial takes slot i's dial lock; a caller that finds another dialing
// there waits no longer than its call's deadline and context.
func (s *muxSlots) lockDial(ctx context.Context, i int, addr string, deadline time.Time) error {
	select {
	case s.dial[i] <- struct{}{}:
		return nil
	default:
	}
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case s.dial[i] <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctxError(ctx.Err(), "waiting for the dial of a connection to "+addr)
	case <-timeout:
		return errDialWaitDeadline
	}
}

// waitDeadlineError is the error of a wait of the multiplexed pool
// (lockDial, lockWrite) that the call's deadline ended. callMux turns it
// into the call's timeoutError, which says whose deadline it was and, for
// a context's, wraps context.DeadlineExceeded.
type waitDeadlineError struct{ while string }

func (e *waitDeadlineError) Error() string { return "client: the call's deadline passed" + e.while }

var (
	errDialWaitDeadline  = &waitDeadlineError{" waiting for another caller's dial of its connection"}
	errWriteWaitDeadline = &waitDeadlineError{" waiting to write its request behind a flush of earlier requests that the server was not reading"}
)

func (s *muxSlots) unlockDial(i int) { <-s.dial[i] }

func newMuxPool(d *dialer, size, maxSize int, writeTimeout time.Duration) *muxPool {
	return &muxPool{
		d: d, size: size, maxSize: maxSize, writeTimeout: writeTimeout,
		addrs: make(map[string]*muxSlots),
		live:  make(map[*muxConn]struct{}),
	}
}

func (p *muxPool) slots(addr string) (*muxSlots, error) {
	p.mu.RLock()
	s, closed := p.addrs[addr], p.closed
	p.mu.RUnlock()
	if closed {
		return nil, errClientClosed
	}
	if s != nil {
		return s, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClientClosed
	}
	if p.left(addr) {
		return nil, instanceLeft(addr)
	}
	return p.slotsLocked(addr), nil
}

// slotsLocked returns addr's slots, making them if need be; p.mu is held.
func (p *muxPool) slotsLocked(addr string) *muxSlots {
	s := p.addrs[addr]
	if s == nil {
		s = &muxSlots{
			conns: make([]atomic.Pointer[muxConn], p.size),
			dial:  make([]chan struct{}, p.size),
		}
		for i := range s.dial {
			s.dial[i] = make(chan struct{}, 1)
		}
		p.addrs[addr] = s
	}
	return s
}

// get returns a live shared connection to addr, dialing one into the slot
// whose turn it is when that slot is empty or its connection failed.
func (p *muxPool) get(ctx context.Context, addr string, deadline time.Time) (*muxConn, error) {
	s, err := p.slots(addr)
	if err != nil {
		return nil, err
	}
	i := int(s.next.Add(1) % uint32(len(s.conns)))
	if mc := s.conns[i].Load(); mc != nil && mc.usable() {
		return mc, nil
	}
	if err := s.lockDial(ctx, i, addr, deadline); err != nil {
		return nil, err
	}
	defer s.unlockDial(i)
	if mc := s.conns[i].Load(); mc != nil && mc.usable() {
		return mc, nil
	}
	p.mu.RLock()
	closed := p.closed
	p.mu.RUnlock()
	if closed { // Close came while this caller waited for another's dial
		return nil, errClientClosed
	}
	// The dial is the slot's, which other callers wait for: a middleware's
	// cancellation of this call does not end it (Close does).
	conn, err := p.d.dial(ctx, addr, deadline, false)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		conn.Close()
		return nil, errClientClosed
	}
	if p.left(addr) { // discovery dropped it while we dialed
		p.mu.Unlock()
		conn.Close()
		return nil, instanceLeft(addr)
	}
	mc := newMuxConn(conn, addr, p.maxSize, p.writeTimeout, p.forget)
	p.live[mc] = struct{}{}
	// Discovery may have dropped addr and listed it again while we dialed:
	// s went with it, and a connection put there would be reached by no
	// later call (nor drained), open until Close. It goes into the
	// address's slots of now; a connection another caller put in slot i
	// meanwhile is drained below, as a replaced one is.
	s = p.slotsLocked(addr)
	old := s.conns[i].Swap(mc)
	p.mu.Unlock()
	if old != nil {
		old.drain() // it closes once its last call is answered
	}
	return mc, nil
}

func (p *muxPool) stats() PoolStats {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return PoolStats{Open: len(p.live), Addresses: len(p.addrs)}
}

// forget is called by a connection's reader when it exits.
func (p *muxPool) forget(mc *muxConn) {
	p.mu.Lock()
	delete(p.live, mc)
	p.mu.Unlock()
}

func (p *muxPool) close() {
	p.mu.Lock()
	p.closed = true
	closing := slices.Collect(maps.Keys(p.live))
	clear(p.addrs) // PoolStats counts no address once closed
	p.mu.Unlock()
	for _, mc := range closing {
		mc.shutdown(errClientClosed)
	}
	for _, mc := range closing {
		<-mc.done
	}
}

// muxCall is a caller waiting for its reply on a muxConn. It lives in the
// pooled callState; ch is reused across calls.
type muxCall struct {
	ch     chan struct{} // capacity 1; the reader signals once per delivered reply
	result thrift.FastCodec
	seq    int32
	method string // the method called, which its reply must name
	err    error  // the call's outcome, written before ch is signalled
	// panicked is what the result's codec panicked with on the reader
	// goroutine (nil if it did not), written before ch is signalled.
	panicked any
}

// outcome returns the call's outcome once ch has been signalled. A panic of
// the result's codec on the reader goroutine goes on here, on the caller's
// goroutine, as it does with the other pools, which decode there.
func (c *muxCall) outcome() error {
	if p := c.panicked; p != nil {
		c.panicked = nil
		if p == (codecGoexit{}) {
			runtime.Goexit()
		}
		panic(p)
	}
	return c.err
}

// codecGoexit is muxCall.panicked when the result's codec called
// runtime.Goexit on the reader goroutine: the caller's goroutine ends too.
type codecGoexit struct{}

// decode decodes call's reply on the reader goroutine, keeping a panic of
// the result's codec (a hand-written codec's bug) for the caller: not
// recovered, it would end the process. A codec that calls runtime.Goexit
// ends the reader, which cannot be stopped: the connection is shut down
// (its other calls fail, the pool replaces it) and the caller, told, ends
// its own goroutine too.
func (mc *muxConn) decode(call *muxCall, typ thrift.MessageType, name string, body []byte) {
	decoded := false
	defer func() {
		if decoded {
			return
		}
		if r := recover(); r != nil {
			call.err, call.panicked = nil, r
			return
		}
		call.err, call.panicked = nil, codecGoexit{}
		mc.shutdown(errors.New("the result codec of " + call.method + " called runtime.Goexit on the reader of the multiplexed connection"))
		call.ch <- struct{}{}
	}()
	call.err = decodeReply(typ, name, body, call.result, &mc.rhdr, call.method, mc.addr)
	decoded = true
}

// muxConn is one connection shared by concurrent calls. Requests are
// written under wmu; the last of a group of writers queued on wmu flushes
// for all of them. A reader goroutine reads replies and hands each to the
// caller waiting for its sequence id.
//
// Lock order: wmu, then mu.
type muxConn struct {
	conn    netpoll.Connection
	addr    string // the server's address, as the pool was asked for it
	maxSize int
	// writeTimeout bounds a flush carrying a frame of a call without a
	// deadline (0: none); see flushLocked.
	writeTimeout time.Duration

	// wq is the number of writers committed to taking wmu (a holder that
	// sees one leaves its flush to them), plus muxFlushing while a flush
	// is under way. A writer that finds a flush under way does not commit:
	// it waits for flushEnd within its own deadline and context, as the
	// flush may be stalled by a peer that stops reading.
	wq  atomic.Int32
	wmu sync.Mutex // guards the connection's Writer side and flushBy, flushAny
	// flushEnd, when set, is closed as the flush under way ends; set by a
	// writer waiting for that.
	flushEnd atomic.Pointer[chan struct{}]
	// flushBy is the latest deadline of the frames waiting to be flushed,
	// flushAny whether one of them has none: a flush is bounded by the
	// deadlines of the calls it carries.
	flushBy  time.Time
	flushAny bool
	// flushGen counts the flushes ended (done or failed); written under
	// wmu. The frames written since the last one go with flush flushGen+1.
	flushGen  atomic.Uint64
	unflushed int           // frames written since the last flush; guarded by wmu
	replies   atomic.Uint64 // reply frames read
	// silentSince is when a call first timed out without a reply frame
	// read while it waited (UnixNano; 0: since then a reply was read).
	silentSince atomic.Int64

	sends, flushes atomic.Int64 // requests written and flushes done (tests read them)

	mu       sync.Mutex
	pending  map[int32]*muxCall // calls waiting for a reply; guarded by mu
	inflight atomic.Int32       // len(pending), stored under mu, read without it
	err      error              // why the connection stopped; guarded by mu
	// draining: no new calls (the server asked to drop the connection, sent
	// a reply that was not its call's, or it failed); written under mu, read
	// without it by usable.
	draining atomic.Bool

	done   chan struct{}  // closed when the reader goroutine exits
	onExit func(*muxConn) // called by the reader as it exits
	rhdr   transport.Header
}

func newMuxConn(conn netpoll.Connection, addr string, maxSize int, writeTimeout time.Duration, onExit func(*muxConn)) *muxConn {
	mc := &muxConn{
		conn:         conn,
		addr:         addr,
		maxSize:      maxSize,
		writeTimeout: writeTimeout,
		pending:      make(map[int32]*muxCall),
		done:         make(chan struct{}),
		onExit:       onExit,
	}
	go mc.readLoop()
	return mc
}

// usable reports whether new calls may use the connection.
func (mc *muxConn) usable() bool {
	return !mc.draining.Load() && mc.conn.IsActive()
}

// register records a call before its request is written, so that its reply
// cannot arrive unannounced. It returns errRetry when the connection takes
// no new calls: the caller should ask the pool again.
func (mc *muxConn) register(call *muxCall) error {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.err != nil || mc.draining.Load() {
		return errRetry
	}
	if other := mc.pending[call.seq]; other != nil {
		// The id wrapped around while a call waits under it: replacing that
		// call would hand its reply to this one and leave it waiting for ever.
		return rpcerr.New(rpcerr.Connection, "the call of "+call.method+" got sequence id "+
			strconv.Itoa(int(call.seq))+", which a call of "+other.method+" still waits under on the connection to "+mc.addr)
	}
	mc.pending[call.seq] = call
	mc.inflight.Store(int32(len(mc.pending)))
	return nil
}

// unregister removes a call that gives up waiting (timeout, cancellation)
// and reports whether it was still pending; if not, the reader is
// delivering its reply and the caller must wait for ch.
func (mc *muxConn) unregister(call *muxCall) bool {
	mc.mu.Lock()
	if mc.pending[call.seq] != call {
		mc.mu.Unlock()
		return false
	}
	delete(mc.pending, call.seq)
	mc.inflight.Store(int32(len(mc.pending)))
	idle := mc.draining.Load() && len(mc.pending) == 0
	mc.mu.Unlock()
	if idle {
		// A draining connection whose last call gave up: nothing more
		// will be read from it.
		mc.shutdown(errDrained)
	}
	return true
}

// send writes one request whose call ends by deadline (zero: none) or
// when ctx is done, and returns the number of the flush that carries it
// (see awaitFlush), or 0 when its frame holds none of args' memory: args
// may be linked into the output by reference, and must not be read once
// the call has returned, but a frame shorter than buf.NocopyThreshold is
// all copies (see buf.LinkBuffer.WriteDirect). The caller that finds no
// other writer queued behind it flushes everything written so far with one
// system call; the others leave their frame for it. A oneway caller, which
// returns at once, flushes its own frame. call is the call's registration,
// which send gives up should args' codec panic (see writeFrame).
func (mc *muxConn) send(ctx context.Context, h *transport.Header, method string, typ thrift.MessageType, seq int32, args thrift.FastCodec, deadline time.Time, call *muxCall) (gen uint64, err error) {
	if !mc.wmu.TryLock() {
		if err = mc.lockWrite(ctx, method, deadline); err != nil {
			return 0, notSent(err)
		}
	}
	w := mc.conn.Writer()
	before := w.MallocLen()
	if err = mc.writeFrame(w, h, method, typ, seq, args, call); err != nil {
		err = notSent(rpcerr.Wrap(rpcerr.Protocol, err, "encoding the request of "+method))
	} else {
		mc.sends.Add(1)
		mc.unflushed++
		if w.MallocLen()-before >= buf.NocopyThreshold {
			gen = mc.flushGen.Load() + 1
		}
		if deadline.IsZero() {
			mc.flushAny = true
		} else if deadline.After(mc.flushBy) {
			mc.flushBy = deadline
		}
		if typ != thrift.ONEWAY && mc.wq.Load() == 0 && mc.inflight.Load() > 1 && mc.unflushed < muxFlushBatch {
			// Other calls are in flight: let those about to write (their
			// callers just woken by a reply) queue behind us, so that one
			// flush carries their frames too. A lone caller does not wait.
			runtime.Gosched()
		}
	}
	if ferr := mc.endWrite(w, typ); ferr != nil && err == nil {
		err = rpcerr.Wrap(rpcerr.Connection, ferr, "writing the request of "+method+" to "+mc.addr)
	}
	return gen, err
}

// writeFrame writes one request frame; the caller holds wmu. A frame that
// fails to encode is dropped; the frames of others stay, and this caller
// may be the one to flush them. Should args' codec panic (a hand-written
// codec's bug) or call runtime.Goexit, the partial frame is dropped too,
// the write ends (endWrite) and call is unregistered (if it was: a oneway
// call is not) before the panic goes on to the caller: otherwise every
// later call on the connection would wait for wmu forever.
func (mc *muxConn) writeFrame(w buf.Writer, h *transport.Header, method string, typ thrift.MessageType, seq int32, args thrift.FastCodec, call *muxCall) error {
	before := w.MallocLen()
	written := false
	defer func() {
		if written {
			return
		}
		w.MallocAck(before)
		mc.endWrite(w, typ)
		if typ != thrift.ONEWAY && !mc.unregister(call) {
			// The connection failed meanwhile, and its shutdown took the
			// call and signalled ch: take the signal, which the call's
			// state, pooled, would otherwise carry to a later call (ended
			// at once, its reply then handed to whichever call has the
			// state by the time it comes).
			<-call.ch
		}
	}()
	err := transport.WriteMessage(w, transport.TTHeader, h, method, typ, seq, args)
	written = true
	if err != nil {
		w.MallocAck(before)
	}
	return err
}

// endWrite ends a writer's hold of wmu: it flushes what is written unless
// a committed writer will (a oneway caller flushes its own frame in any
// case, and so does the writer of the muxFlushBatch-th frame), then
// releases wmu, and returns the flush's error.
func (mc *muxConn) endWrite(w buf.Writer, typ thrift.MessageType) error {
	var err error
	if w.MallocLen() > 0 {
		flush := typ == thrift.ONEWAY || mc.unflushed >= muxFlushBatch
		if flush {
			mc.wq.Add(muxFlushing)
		} else {
			flush = mc.wq.CompareAndSwap(0, muxFlushing)
		}
		if flush {
			err = mc.flushLocked()
		}
	}
	mc.wmu.Unlock()
	return err
}

// muxFlushing is the bit of muxConn.wq set while a flush is under way.
const muxFlushing = 1 << 30

// muxFlushBatch is the most frames a flush waits for: the writer of the
// 16th frame since the last flush flushes, even with writers queued behind
// it. Batches of every waiting caller's frame turn the callers into a
// convoy: the server gets nothing until the last caller has written, and
// the client then waits idle while the server serves the whole batch. In
// batches of at most 16 the server serves the first while the client
// writes the next. (rpcbench -impl petrel-mux, 1 KiB, 100 callers over 2
// connections, each side on its own core: 16 took the calls from about 175k
// to 250k a second, with both cores 35-50% idle before and the client's
// busy after; 8, 16 and 24 did alike, 32 less well, at 128 B as at 1 KiB.)
const muxFlushBatch = 16

// lockWrite takes wmu for a writer that did not get it at once. While no
// flush is under way the writer commits (counts itself in wq) and waits for
// the lock: the holder usually only writes its frame and leaves the flush
// to it. While one is, the writer waits, uncommitted, for the flush to end,
// but no longer than its deadline and ctx: a peer that stops reading stalls
// a flush until the latest deadline of the calls it carries. A committed
// writer's wait is not so bounded: a holder that flushes anyway (a oneway
// caller, the writer of the muxFlushBatch-th frame, awaitFlush) holds it
// for its whole flush.
func (mc *muxConn) lockWrite(ctx context.Context, method string, deadline time.Time) error {
	var timer *time.Timer
	var timeout <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
			muxWaitTimers.Put(timer)
		}
	}()
	for {
		v := mc.wq.Load()
		if v&muxFlushing == 0 {
			if mc.wq.CompareAndSwap(v, v+1) {
				mc.wmu.Lock()
				mc.wq.Add(-1)
				return nil
			}
			continue
		}
		end := mc.flushEndCh()
		if mc.wq.Load()&muxFlushing == 0 {
			continue // it ended meanwhile (and may not have seen end)
		}
		if timer == nil && !deadline.IsZero() {
			d := time.Until(deadline)
			if t, _ := muxWaitTimers.Get().(*time.Timer); t != nil {
				timer = t
				timer.Reset(d)
			} else {
				timer = time.NewTimer(d)
			}
			timeout = timer.C
		}
		select {
		case <-end:
		case <-ctx.Done():
			return ctxError(ctx.Err(), "waiting to write the request of "+method+" to "+mc.addr+
				" behind a flush of earlier requests that the server was not reading")
		case <-timeout:
			return errWriteWaitDeadline
		}
	}
}

// muxWaitTimers are the timers of writers waiting in lockWrite, stopped.
var muxWaitTimers sync.Pool

// flushEndCh returns the channel closed as the flush under way ends.
func (mc *muxConn) flushEndCh() chan struct{} {
	for {
		if p := mc.flushEnd.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if mc.flushEnd.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// flushLocked flushes the frames written so far, within the latest
// deadline of their calls, and fails the connection if that fails. The
// caller holds wmu and has set muxFlushing in wq, which it clears.
//
// A flush holds the write lock: one stalled by a peer that stops reading
// holds up every caller. It is bounded by the calls it carries, whose own
// timeouts (WithCallTimeout, WithMethodTimeout, a context's deadline) may
// be longer than the client's RPC timeout; only a flush carrying a call
// without a deadline, which nothing else bounds, is cut off after
// writeTimeout (the client's RPC timeout).
func (mc *muxConn) flushLocked() error {
	mc.flushes.Add(1)
	by := mc.flushBy
	var timeout time.Duration
	if mc.flushAny {
		by, timeout = time.Time{}, mc.writeTimeout
	}
	mc.flushBy, mc.flushAny = time.Time{}, false
	mc.unflushed = 0
	mc.conn.SetWriteTimeout(timeout)
	mc.conn.SetWriteDeadline(by)
	err := mc.conn.Writer().Flush()
	mc.flushGen.Add(1)
	mc.wq.Add(-muxFlushing)
	if p := mc.flushEnd.Load(); p != nil && mc.flushEnd.CompareAndSwap(p, nil) {
		close(*p) // writers waiting for the flush to end
	}
	if err != nil && mc.conn.IsActive() {
		mc.shutdown(err)
	}
	// Otherwise the failed write closed the connection (a reset, the
	// peer's close): the reader, which then ends without waiting, first
	// reads the replies already in the input (a Petrel server's exception
	// to a request over its limit comes before the reset of its close),
	// then shuts the connection down, failing the calls left.
	return err
}

// awaitFlush returns once flush gen has ended, flushing itself if none is
// under way: a call that stops waiting for its reply returns only after its
// request has left (or failed to), as its args may be read until then.
// For a request copied whole into the output (gen 0) it returns at once: a
// call giving up does not wait for a flush that a peer not reading stalls
// until the latest deadline of the calls it carries.
func (mc *muxConn) awaitFlush(gen uint64) {
	if mc.flushGen.Load() >= gen {
		return
	}
	mc.wmu.Lock()
	if mc.flushGen.Load() < gen {
		mc.wq.Add(muxFlushing)
		mc.flushLocked()
	}
	mc.wmu.Unlock()
}

// readLoop reads replies until the connection fails or is closed, then
// fails every pending call.
func (mc *muxConn) readLoop() {
	defer close(mc.done)
	defer mc.onExit(mc)
	r := mc.conn.Reader()
	for {
		mc.rhdr.Reset()
		name, typ, seq, body, err := transport.ReadMessage(r, transport.TTHeader, mc.maxSize, &mc.rhdr)
		if err != nil {
			if errors.Is(err, transport.ErrFrameTooLarge) {
				err = rpcerr.Wrap(rpcerr.Protocol, err, overMaxSize(mc.maxSize))
			}
			mc.shutdown(err)
			return
		}
		mc.replies.Add(1)
		if mc.silentSince.Load() != 0 {
			mc.silentSince.Store(0)
		}
		mc.mu.Lock()
		call := mc.pending[seq]
		if call != nil {
			delete(mc.pending, seq)
			mc.inflight.Store(int32(len(mc.pending)))
		}
		mc.mu.Unlock()
		drop := serverAsksDrop(&mc.rhdr)
		if call != nil {
			mc.decode(call, typ, name, body)
			// A reply that is not its call's (checked only for a call
			// that failed) shows the server mismatching sequence ids: a
			// reply to another call of the same method could pass for
			// this one's. The connection takes no new call.
			if call.err != nil && notTheCallsReply(typ, name, call.method) {
				drop = true
			}
		} // else: its caller gave up (timeout); the late reply is dropped.
		r.Release()
		if call != nil {
			call.ch <- struct{}{}
		}
		if drop {
			mc.draining.Store(true)
		}
		if mc.draining.Load() {
			mc.mu.Lock()
			idle := len(mc.pending) == 0
			mc.mu.Unlock()
			if idle {
				mc.shutdown(errDrained)
				return
			}
		}
	}
}

// muxStallAfter is how long a connection with calls waiting may read no
// reply before the calls that time out on it retire it.
const muxStallAfter = time.Second

// timedOut is told by a call that timed out on the connection whether a
// reply frame was read while it waited. When none has been for
// muxStallAfter, the server has stopped answering on this connection (or
// stalled in the middle of a frame): it is drained, and new calls go to a
// new connection. A server merely slower than the calls' timeouts still
// sends its late replies, which keep the connection.
func (mc *muxConn) timedOut(replied bool) {
	if replied {
		return
	}
	now := time.Now().UnixNano()
	since := mc.silentSince.Load()
	if since == 0 {
		mc.silentSince.CompareAndSwap(0, now)
		return
	}
	if time.Duration(now-since) >= muxStallAfter {
		mc.drain()
	}
}

// drain stops new calls on the connection and closes it once no call waits.
func (mc *muxConn) drain() {
	mc.mu.Lock()
	mc.draining.Store(true)
	idle := len(mc.pending) == 0
	mc.mu.Unlock()
	if idle {
		mc.shutdown(errDrained)
	}
	// Otherwise the reader closes it after the last reply.
}

// shutdown closes the connection for cause and fails the calls waiting on
// it with a Connection error. It is safe to call more than once.
func (mc *muxConn) shutdown(cause error) {
	mc.mu.Lock()
	if mc.err == nil {
		mc.err = cause
	}
	mc.draining.Store(true)
	pending := mc.pending
	if len(pending) > 0 {
		mc.pending = make(map[int32]*muxCall)
		mc.inflight.Store(0)
	}
	mc.mu.Unlock()
	mc.conn.Close()
	if len(pending) == 0 {
		return
	}
	for _, call := range pending {
		call.err = connError(cause, "the multiplexed connection to "+mc.addr+" failed during the call of "+call.method)
		call.ch <- struct{}{}
	}
}
