//go:build linux || darwin || freebsd

package netpoll

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"runtime/debug"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/petrel-rpc/petrel/gopool"
)

// EventLoop serves connections accepted from listeners with the handlers of
// its Config.
type EventLoop struct {
	cfg      Config
	pool     *gopool.Pool
	ownsPool bool

	mu        sync.Mutex               // guards the fields below
	conns     map[*connection]struct{} // open connections
	listeners map[*listener]struct{}   // serving listeners
	accepting int                      // connections in accepted, not yet published or refused
	closed    bool
	done      chan struct{} // closed by Shutdown
}

// NewEventLoop returns an event loop with cfg.
func NewEventLoop(cfg Config) (*EventLoop, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.InputCap == 0 {
		cfg.InputCap = defaultInputCap
	}
	l := &EventLoop{
		cfg:       cfg,
		pool:      cfg.Pool,
		conns:     make(map[*connection]struct{}),
		listeners: make(map[*listener]struct{}),
		done:      make(chan struct{}),
	}
	if l.pool == nil {
		p, err := gopool.New(gopool.DefaultConfig())
		if err != nil {
			return nil, err
		}
		l.pool, l.ownsPool = p, true
	}
	return l, nil
}

// Serve accepts connections from ln and serves them until Shutdown; then it
// returns nil. ln must be a TCP or Unix listener from the net package, or a
// type wrapping one that is a syscall.Conn giving its fd (its file
// descriptor is polled directly: a wrapper's Accept is never called).
// Closing ln (not through Shutdown) ends accepting too, as for net/http:
// Serve stops listening and returns an error that says so and wraps
// net.ErrClosed (a wrapper's close is seen within 50 ms, when its
// SyscallConn's Control fails, and the error wraps that failure); the
// connections already accepted are served on until Shutdown. Serve may be
// called for several listeners at once.
func (l *EventLoop) Serve(ln net.Listener) error {
	lis, err := newListener(l, ln)
	if err != nil {
		return err
	}
	if err := defaultManager.register(&lis.op, wantRead); err != nil {
		closeFD(lis.op.fd)
		return err
	}
	// Publish the listener only once it is registered, so that Shutdown sees
	// it complete.
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		lis.stop()
		return nil // shut down before it started: nothing to serve
	}
	l.listeners[lis] = struct{}{}
	l.mu.Unlock()
	lis.watch()
	err = nil
	select {
	case <-l.done:
		lis.stop() // as Shutdown does, maybe not yet: ln is closed on return
	case <-lis.failed:
		err = lis.err
		l.mu.Lock()
		delete(l.listeners, lis)
		l.mu.Unlock()
	}
	// ln is closed: its watcher's Accept returns, and it ends.
	<-lis.watched
	return err
}

// Shutdown stops accepting, lets running handlers finish, and closes each
// connection once it is idle (no handler running and no unread input). It
// returns when every connection is closed, or closes the rest and returns
// ctx.Err() when ctx ends first. A connection accepted just before, whose
// OnPrepare is running, counts as open: Shutdown waits for it too (an
// OnPrepare that called Shutdown would wait out ctx).
func (l *EventLoop) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
	lis := make([]*listener, 0, len(l.listeners))
	for x := range l.listeners {
		lis = append(lis, x)
	}
	l.listeners = map[*listener]struct{}{}
	l.mu.Unlock()
	for _, x := range lis {
		x.stop()
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var err error
	for {
		if l.closeIdle() == 0 {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
			l.closeAll()
		case <-tick.C:
			continue
		}
		break
	}
	if l.ownsPool {
		// Bounded by ctx too: a handler stuck on something other than its
		// connection must not hold Shutdown past it.
		if perr := l.pool.Shutdown(ctx); err == nil {
			err = perr
		}
	}
	return err
}

// closeIdle closes idle connections and returns how many remain, counting
// those still being accepted.
func (l *EventLoop) closeIdle() int {
	l.mu.Lock()
	var idle []*connection
	for c := range l.conns {
		if c.processing.Load() == 0 && c.in.Len() == 0 && c.holds.Load() == 0 {
			idle = append(idle, c)
		}
	}
	left := len(l.conns) - len(idle) + l.accepting
	l.mu.Unlock()
	for _, c := range idle {
		if c.processing.CompareAndSwap(0, 1) {
			if c.in.Len() == 0 {
				c.finishHandler()
				continue
			}
			// Input came since the check: the poller, finding the flag
			// taken, did not dispatch it. Dispatch it now, or it waits
			// with no handler until Shutdown's context ends.
			c.processing.Store(0)
			c.dispatch()
			left++
		} else {
			left++
		}
	}
	return left
}

func (l *EventLoop) closeAll() {
	l.mu.Lock()
	all := slices.Collect(maps.Keys(l.conns))
	l.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
}

// accepted serves a connection the listener accepted, or closes it (and its
// fd) when it is not served. One accepted once Shutdown has begun (by a
// poller or watcher already past its listener's stop) is closed at once,
// before OnPrepare; Shutdown waits for those begun before it, so that no
// callback of theirs runs after it has returned.
func (l *EventLoop) accepted(c *connection) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		closeFD(c.op.fd)
		return
	}
	l.accepting++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.accepting--
		l.mu.Unlock()
	}()
	c.inputCap = l.cfg.InputCap
	c.readTimeout.Store(int64(l.cfg.ReadTimeout))
	c.writeTimeout.Store(int64(l.cfg.WriteTimeout))
	if l.cfg.OnPrepare != nil && !l.prepare(c) {
		closeFD(c.op.fd)
		return
	}
	// No handler runs until the connection is published and OnConnect is
	// done: input that comes meanwhile waits. Nor does OnDisconnect.
	c.processing.Store(1)
	if l.cfg.OnConnect != nil {
		c.connecting.Store(connectRunning)
	}
	if err := defaultManager.register(&c.op, wantRead); err != nil {
		if c.connected() { // OnConnect will not run
			l.disconnected(c)
		}
		l.notServed(c, err, false)
		closeFD(c.op.fd)
		return
	}
	// Published only once registered, so that Shutdown never closes a
	// connection whose fd is not in a poller yet.
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		if c.connected() { // OnConnect will not run
			l.disconnected(c)
		}
		l.notServed(c, ErrLoopClosed, true)
		return
	}
	if c.state.Load() != stateClosed { // else closeWith has been and forgotten it
		l.conns[c] = struct{}{}
	}
	l.mu.Unlock()
	if l.cfg.IdleTimeout > 0 {
		c.SetIdleTimeout(l.cfg.IdleTimeout)
	}
	if l.cfg.OnConnect != nil {
		l.pool.Go(c.connect)
		return
	}
	c.startServing()
}

// prepare runs OnPrepare, on the poller goroutine. A panic is reported and
// the connection is not served. So it is after a runtime.Goexit, which goes
// on to end the poller goroutine (the poller starts another): the fd is
// closed here, as accepted does not get to.
func (l *EventLoop) prepare(c *connection) (ok bool) {
	returned := false
	defer func() {
		if returned {
			return
		}
		why := "netpoll: OnPrepare called runtime.Goexit"
		r := recover()
		if r != nil {
			l.reportPanic(r)
			why = "netpoll: OnPrepare panicked"
		}
		l.notServed(c, errors.New(why), false)
		if r == nil {
			closeFD(c.op.fd)
		}
	}()
	c.setContext(l.cfg.OnPrepare(c))
	returned = true
	// Closed by OnPrepare (or by someone it gave the connection to): its
	// fd is not registered, so it is only closed here.
	return c.state.Load() != stateClosed
}

// connect runs OnConnect in a pool goroutine, then lets handlers serve the
// connection. An OnConnect that panics (reported) or calls runtime.Goexit
// closes the connection.
func (c *connection) connect() {
	l := c.loop
	done := false
	defer func() {
		if done {
			return
		}
		why := "netpoll: OnConnect called runtime.Goexit"
		if r := recover(); r != nil {
			l.reportPanic(r)
			why = "netpoll: OnConnect panicked"
		}
		c.closeWith(errors.New(why))
		owed := c.connected()
		c.processing.Store(0)
		c.finishIfDone()
		if owed {
			c.disconnectNow()
		}
	}()
	c.setContext(l.cfg.OnConnect(c.context(), c))
	done = true
	owed := c.connected()
	c.startServing()
	if owed {
		c.disconnectNow()
	}
}

// connected records that OnConnect has returned (or will not run), after
// its context is set, and reports whether an OnDisconnect waits for it,
// which the caller then runs, with that context.
func (c *connection) connected() (owed bool) {
	return c.connecting.Swap(connectNone) == connectOwed
}

// disconnectNow runs OnDisconnect on the calling goroutine: connect's,
// a task of the loop's pool, which Shutdown waits for (the connection,
// closed, is no longer among those it waits for).
func (c *connection) disconnectNow() {
	if f := c.loop.cfg.OnDisconnect; f != nil {
		f(c.context(), c)
	}
}

// startServing lets handlers serve a connection accepted: the caller owns
// processing and gives it up.
func (c *connection) startServing() {
	c.processing.Store(0)
	// Input that came meanwhile is served even if the peer has closed since;
	// the handler then finishes the connection.
	if c.in.Len() > 0 {
		c.dispatch()
		return
	}
	c.finishIfDone()
}

// notServed closes a connection accepted and prepared that will not be
// served, running OnDisconnect for it, since OnPrepare may have counted it,
// and its close callbacks. Unless it is registered (then it is closed like
// any other), the caller closes the fd.
func (l *EventLoop) notServed(c *connection, err error, registered bool) {
	for {
		s := c.state.Load()
		if s == stateClosed {
			break // whoever closed it did the rest
		}
		if c.state.CompareAndSwap(s, stateClosed) {
			if s == stateOpen {
				c.closeErr.Store(&err)
				if l.cfg.OnPrepare != nil {
					l.disconnected(c)
				}
			}
			if registered {
				c.closed()
			} else {
				c.runCloseCallbacks() // OnPrepare may have added some
			}
			break
		}
	}
	if registered {
		c.dropInput()
		c.processing.Store(0)
	}
}

func (l *EventLoop) forget(c *connection) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// disconnected runs OnDisconnect for a connection that stopped being active.
// While OnConnect runs (the peer closed, or someone closed the connection,
// before it returned), OnDisconnect waits for it and gets the context it
// returned: connected runs it.
func (l *EventLoop) disconnected(c *connection) {
	f := l.cfg.OnDisconnect
	if f == nil || c.connecting.CompareAndSwap(connectRunning, connectOwed) {
		return
	}
	l.pool.Go(func() { f(c.context(), c) })
}

func (l *EventLoop) reportPanic(r any) {
	if h := l.cfg.PanicHandler; h != nil {
		h(r, debug.Stack())
	}
}

// listener polls a listening socket and accepts its connections.
type listener struct {
	op     fdOperator
	loop   *EventLoop
	ln     net.Listener
	failed chan struct{}
	err    error

	mu      sync.Mutex // guards backoff and stopped
	backoff time.Duration
	timer   *time.Timer
	stopped bool
	quit    chan struct{} // closed when stopped

	watched chan struct{} // closed when the watcher ends
}

func newListener(l *EventLoop, ln net.Listener) (*listener, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("netpoll: Serve needs a TCP or Unix listener, got %T", ln)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("netpoll: listener fd: %w", err)
	}
	fd := -1
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return nil, fmt.Errorf("netpoll: listener fd: %w", err)
	}
	// Poll a duplicate: its lifetime is ours, so closing ln can never leave
	// the poller with a number the kernel has given to another socket.
	dup, err := dupFD(fd)
	if err != nil {
		return nil, err
	}
	lis := &listener{loop: l, ln: ln, failed: make(chan struct{}), quit: make(chan struct{}), watched: make(chan struct{})}
	lis.op.fd = dup
	lis.op.ln = lis
	lis.op.closeFD = true
	return lis, nil
}

// onEvent accepts what is pending, on the poller goroutine.
func (x *listener) onEvent(ev int) {
	for i := 0; i < 64; i++ {
		if !x.op.acquire() {
			return
		}
		c, errno := acceptConn(x.op.fd, x.loop, x.ln.Addr())
		x.op.release()
		switch {
		case errno == 0:
			x.loop.accepted(c)
		case errno == syscall.EAGAIN:
			return
		case errno == syscall.EINTR || acceptSkips(errno):
		case errno == syscall.EMFILE || errno == syscall.ENFILE || errno == syscall.ENOBUFS || errno == syscall.ENOMEM:
			x.pause()
			return
		default:
			x.fail(sysErr("accept", errno))
			return
		}
	}
}

// acceptSkips reports whether an accept error is one connection's rather
// than the listener's: a connection aborted before it was accepted, or
// (Linux) the pending network error of one, or a firewall's refusal of it.
// accept(2) asks that these be retried as EAGAIN is; the next accept goes on.
func acceptSkips(errno syscall.Errno) bool {
	switch errno {
	case syscall.ECONNABORTED, syscall.EPROTO, syscall.ENETDOWN, syscall.ENOPROTOOPT, syscall.EHOSTDOWN,
		syscall.EHOSTUNREACH, syscall.EOPNOTSUPP, syscall.ENETUNREACH, syscall.EPERM:
		return true
	}
	return false
}

// pause stops accepting for a while when the process is out of file
// descriptors or memory, instead of spinning on a listener that stays
// readable; the pause doubles while the condition lasts (10 ms to 1 s).
func (x *listener) pause() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stopped {
		return
	}
	x.backoff = nextBackoff(x.backoff)
	x.op.dropInterest(wantRead)
	x.timer = time.AfterFunc(x.backoff, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		if !x.stopped {
			x.op.addInterest(wantRead)
		}
	})
}

func (x *listener) fail(err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stopped {
		return
	}
	x.err = err
	close(x.failed)
	x.stopLocked()
}

func (x *listener) stop() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.stopLocked()
}

func (x *listener) stopLocked() {
	if x.stopped {
		return
	}
	x.stopped = true
	close(x.quit)
	if x.timer != nil {
		x.timer.Stop()
	}
	x.op.detach()
	// The poller closes the duplicate after its batch, some time after
	// Serve returns; stop the socket listening first, so that its address
	// can be listened on again once Serve has returned.
	stopListening(x.op.fd)
	x.op.release()
	x.ln.Close()
}

// watch starts the goroutine that learns of ln's Close: the poller accepts
// from a duplicate of ln's fd, which the Close leaves listening, and the
// kernel says nothing of it. For a net package listener the watcher waits
// in ln's own Accept, which returns net.ErrClosed at the Close; the
// listener then stops, and Serve returns an error that says so. A
// connection the watcher accepts before the poller does is served as the
// poller's are. Another type (one wrapping a net package's listener, whose
// Close leaves the duplicate listening as well) is not accepted from: its
// Accept may wrap the connections it returns, giving no fd to serve. Its
// Close is seen by asking for its fd every watchEvery (watchClosed).
func (x *listener) watch() {
	switch ln := x.ln.(type) {
	case *net.TCPListener:
		go x.watchLoop(func() (net.Conn, error) { return ln.AcceptTCP() })
	case *net.UnixListener:
		go x.watchLoop(func() (net.Conn, error) { return ln.AcceptUnix() })
	default:
		go x.watchClosed()
	}
}

// watchEvery is how often a wrapped listener is checked for its Close.
const watchEvery = 50 * time.Millisecond

// watchClosed ends the listener once ln, a wrapper, says its fd is closed
// (its SyscallConn's Control fails), or once it stops.
func (x *listener) watchClosed() {
	defer close(x.watched)
	t := time.NewTimer(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-x.quit:
			return
		case <-t.C:
		}
		err := errors.New("its SyscallConn failed")
		if rc, serr := x.ln.(syscall.Conn).SyscallConn(); serr != nil {
			err = serr
		} else if err = rc.Control(func(uintptr) {}); err == nil {
			t.Reset(watchEvery)
			continue
		}
		if !errors.Is(err, net.ErrClosed) {
			// An *os.File's RawConn says os.ErrClosed: Serve's error
			// wraps net.ErrClosed whatever the wrapper's fd is.
			err = fmt.Errorf("%w (%w)", net.ErrClosed, err)
		}
		x.fail(fmt.Errorf("netpoll: Serve: listener closed: %w", err))
		return
	}
}

func (x *listener) watchLoop(accept func() (net.Conn, error)) {
	ended := false
	var w backoffWait
	defer func() {
		w.stop()
		if !ended {
			// OnPrepare, run here for a connection the watcher accepted,
			// called runtime.Goexit (prepare has dealt with the connection):
			// watch on in a new goroutine.
			go x.watchLoop(accept)
			return
		}
		close(x.watched)
	}()
	for {
		nc, err := accept()
		if err == nil {
			w.reset()
			x.adopt(nc, &w)
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			x.fail(fmt.Errorf("netpoll: Serve: listener closed: %w", err))
			ended = true
			return
		}
		// Out of fds or memory (the poller pauses too), or a deadline the
		// user set on ln: wait and try again; only a close ends the watch.
		if !w.wait(x.quit) {
			ended = true // stopped
			return
		}
	}
}

// adopt serves a connection the watcher accepted: the loop gets a duplicate
// of its fd, and nc is closed. One that is not a syscall.Conn has no fd to
// poll: it is only closed (the net package's listeners never return such).
// Out of fds, adopt waits (w) and tries again rather than drop the
// connection, until the listener stops.
func (x *listener) adopt(nc net.Conn, w *backoffWait) {
	defer nc.Close()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return // no fd to poll (the net package's listeners never return such)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return // closed already: nothing to serve
	}
	for {
		fd := -1
		var derr error
		if err := rc.Control(func(f uintptr) { fd, derr = dupFD(int(f)) }); err != nil {
			return
		}
		if derr == nil {
			w.reset()
			x.loop.accepted(newConnection(fd, x.loop, nc.LocalAddr(), nc.RemoteAddr()))
			return
		}
		if !w.wait(x.quit) {
			return // stopped: the peer sees the connection closed
		}
	}
}

// nextBackoff returns the pause after d of a listener short of fds or
// memory: 10 ms first (d zero), then doubling up to 1 s.
func nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return 10 * time.Millisecond
	}
	return min(2*d, time.Second)
}

// backoffWait waits between attempts that failed for want of resources,
// doubling the pause from 10 ms to 1 s. One goroutine only.
type backoffWait struct {
	pause time.Duration
	timer *time.Timer
}

// wait waits for the next pause, or until quit is closed; it reports
// whether the pause ran out.
func (w *backoffWait) wait(quit <-chan struct{}) bool {
	w.pause = nextBackoff(w.pause)
	if w.timer == nil {
		w.timer = time.NewTimer(w.pause)
	} else {
		w.timer.Reset(w.pause)
	}
	select {
	case <-w.timer.C:
		return true
	case <-quit:
		return false
	}
}

func (w *backoffWait) reset() { w.pause = 0 }

func (w *backoffWait) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}
