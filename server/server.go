package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/gopool"
	"github.com/petrel-rpc/petrel/limit"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// ErrServerStopped is returned by Run and Serve on a server whose Stop was
// called before they started, and by RegisterService after Run or Serve.
var ErrServerStopped = errors.New("server: stopped")

// Server serves Thrift services. Make one with [New], add services with
// [Server.RegisterService], then call [Server.Run] or [Server.Serve]; end it
// with [Server.Stop].
//
// Lock order: Server.mu, then a connection's write lock. Counters are atomic.
type Server struct {
	cfg    config
	cfgErr error // from validation in New; returned by Run and Serve
	// epoch is when New ran: the limiter's clock is the time since
	// (monotonic; a wall clock set back would stop admitting requests).
	epoch time.Time

	mu       sync.Mutex                    // guards the fields below
	services []*service                    // guarded by mu; read-only once serving
	byName   map[string]*method            // guarded by mu; read-only once serving: method name -> first service's method
	bySvc    map[string]map[string]*method // guarded by mu; read-only once serving: service -> method -> method
	serving  bool                          // guarded by mu
	stopped  bool                          // guarded by mu
	loop     *netpoll.EventLoop            // guarded by mu
	pool     *gopool.Pool                  // guarded by mu: runs TTHeader handlers (see handlerPool)
	readers  *gopool.Pool                  // guarded by mu: runs the connections' readers and netpoll's callbacks (see readerPool)
	ln       net.Listener                  // guarded by mu
	served   chan struct{}                 // closed when Serve returns (after it started serving)
	stopDone chan struct{}                 // closed when the first Stop returns

	ep  endpoint.Endpoint // set before serving starts, read-only after
	lim *limit.Limiter    // connections, QPS, in flight; set by New, read-only pointer

	draining atomic.Bool  // set by Stop
	lastRead atomic.Int64 // unix nanoseconds of the last request read

	lastPanic atomic.Value // string: the last panic outside a handler, with its stack

	reg registration // option_registry.go

	// rejectTimed, when set (by tests, before serving), is told the time
	// from reading each request the limits reject to its rejection written
	// (flushed, on a TTHeader connection); see export_test.go.
	rejectTimed func(time.Duration)

	stats struct {
		rejectedConns atomic.Int64
		rejectedQPS   atomic.Int64
		rejectedInFl  atomic.Int64
		rejectedStop  atomic.Int64
		requests      atomic.Int64
		panics        atomic.Int64
	}
}

// service is one registered service.
type service struct {
	info    *thrift.ServiceInfo
	handler any
}

// New returns a server configured by opts. Invalid options are reported by
// Run and Serve.
func New(opts ...Option) *Server {
	s := &Server{
		cfg:      defaultConfig(),
		byName:   make(map[string]*method),
		bySvc:    make(map[string]map[string]*method),
		served:   make(chan struct{}),
		stopDone: make(chan struct{}),
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&s.cfg)
		}
	}
	s.cfgErr = s.cfg.validate()
	s.epoch = time.Now()
	lim, err := limit.New(limit.Config{
		MaxConnections: max(s.cfg.maxConns, 0),
		MaxQPS:         max(s.cfg.maxQPS, 0),
		MaxInFlight:    max(s.cfg.maxInFlight, 0),
	}, 0)
	if err != nil && s.cfgErr == nil {
		s.cfgErr = err
	}
	s.lim = lim
	if s.lim == nil {
		s.lim, _ = limit.New(limit.DefaultConfig(), 0)
	}
	return s
}

func configErr(opt string, v any) error {
	return fmt.Errorf("server: %s(%v): the value must not be negative (sizes must be positive)", opt, v)
}

// RegisterService registers a service: info is the generated
// <Service>ServiceInfo and handler the value implementing the generated
// service interface, which info's Handler functions call.
//
// Several services may share a server. Methods are found by their wire name;
// when two services have a method of the same name, a TTHeader request's
// IDL service name (the string key "isn", which Kitex clients send) or
// callee service name (or an Apache multiplexed name "Service:method")
// chooses, and other requests go to the service registered first. A
// request whose IDL service name names a registered service is that
// service's alone, as on a Kitex server: if it lacks the method, the
// request is refused with UNKNOWN_METHOD naming the service and method.
// RegisterService fails after Run or Serve, for a service name registered
// twice, and for a method without a Handler.
func (s *Server) RegisterService(info *thrift.ServiceInfo, handler any) error {
	if info == nil || handler == nil {
		return errors.New("server: RegisterService needs a ServiceInfo and a handler")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serving || s.stopped {
		return fmt.Errorf("server: RegisterService(%s) after Run or Serve: %w", info.Name, ErrServerStopped)
	}
	if _, dup := s.bySvc[info.Name]; dup {
		return fmt.Errorf("server: service %q is registered twice", info.Name)
	}
	svc := &service{info: info, handler: handler}
	ms := make(map[string]*method, len(info.Methods))
	for i := range info.Methods {
		mi := &info.Methods[i]
		if mi.Handler == nil || mi.NewArgs == nil || (!mi.Oneway && mi.NewResult == nil) {
			return fmt.Errorf("server: method %s.%s has no Handler, NewArgs or NewResult (regenerate the service code)", info.Name, mi.Name)
		}
		if _, dup := ms[mi.Name]; dup {
			continue // a base service's method overridden by a nearer one
		}
		ms[mi.Name] = newMethod(svc, mi)
	}
	s.services = append(s.services, svc)
	s.bySvc[info.Name] = ms
	for name, m := range ms {
		if _, ok := s.byName[name]; !ok {
			s.byName[name] = m
		}
	}
	return nil
}

// Run listens on the configured address (or serves the WithListener
// listener, which it closes when it returns, as Serve does) and serves
// until Stop. It returns nil after Stop.
func (s *Server) Run() error {
	if ln := s.cfg.ln; ln != nil {
		return s.Serve(ln)
	}
	if s.cfgErr != nil {
		return s.cfgErr
	}
	s.mu.Lock()
	stopped, serving := s.stopped, s.serving
	s.mu.Unlock()
	if stopped {
		return ErrServerStopped
	}
	if serving {
		// Listening again would fail on the address this server holds.
		return fmt.Errorf("server: Run called twice (the server already serves %s)", s.cfg.addr)
	}
	ln, err := net.Listen("tcp", s.cfg.addr)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", s.cfg.addr, err)
	}
	return s.Serve(ln)
}

// Serve serves connections accepted from ln (a TCP or Unix listener from the
// net package) until Stop, then returns nil. Serve closes ln when it returns,
// also when it returns an error without serving (but not the listener it
// is already serving, when called again with it). It may be called once.
// When accepting fails for good, Serve stops serving as Stop does, within
// the exit wait time, and returns an error naming the address and the
// failure.
func (s *Server) Serve(ln net.Listener) error {
	if ln == nil {
		// A listener whose error was dropped: nothing to close or serve.
		return errors.New("server: Serve needs a listener, got nil")
	}
	if isNilPointer(ln) {
		return fmt.Errorf("server: Serve needs a listener, got a nil %T", ln)
	}
	if s.cfgErr != nil {
		ln.Close()
		return s.cfgErr
	}
	s.mu.Lock()
	if s.stopped || s.serving {
		// The listener being served (Run called again with WithListener)
		// stays open: the Serve serving it closes it.
		if !sameListener(ln, s.ln) {
			ln.Close()
		}
		stopped := s.stopped
		s.mu.Unlock()
		if stopped {
			return ErrServerStopped
		}
		return errors.New("server: Serve called twice")
	}
	if len(s.services) == 0 {
		s.mu.Unlock()
		ln.Close()
		return errors.New("server: no service registered")
	}
	pool, err := gopool.New(gopool.Config{MaxWorkers: handlerPool, PanicHandler: s.poolPanic})
	if err != nil {
		s.mu.Unlock()
		ln.Close()
		return err
	}
	readers, err := gopool.New(gopool.Config{MaxWorkers: readerPool, PanicHandler: s.poolPanic})
	if err != nil {
		s.mu.Unlock()
		ln.Close()
		return err
	}
	loop, err := netpoll.NewEventLoop(netpoll.Config{
		OnRequest:    s.onRequest,
		OnPrepare:    s.onPrepare,
		OnConnect:    s.onConnect,
		WriteTimeout: s.cfg.writeTimeout,
		IdleTimeout:  s.cfg.idleTimeout,
		Pool:         readers,
		PanicHandler: s.loopPanic,
	})
	if err != nil {
		s.mu.Unlock()
		ln.Close()
		return err
	}
	s.ep = endpoint.Chain(s.cfg.mws...)(callHandler)
	s.serving, s.loop, s.pool, s.readers, s.ln = true, loop, pool, readers, ln
	s.mu.Unlock()

	defer close(s.served)
	if err := s.register(ln); err != nil {
		loop.Shutdown(context.Background())
		readers.Close()
		pool.Close()
		ln.Close()
		return err
	}
	err = loop.Serve(ln)
	ln.Close()
	if err != nil {
		// The listener could not be served or failed: clients must not pick
		// the server any more; then stop serving what is open.
		err = fmt.Errorf("server: serving %s: %w", ln.Addr(), err)
		regErr := s.deregisterFailed()
		s.endFailed(loop, readers, pool)
		return errors.Join(err, regErr)
	}
	return nil
}

// The server runs two pools of goroutines, so that reading connections
// never waits behind handlers. The readers pool runs the connections'
// readers (onRequest), netpoll's OnConnect and
// the handlers a reader runs itself (Framed and Buffered requests, and
// TTHeader requests past maxConnInflight on one connection). netpoll hands
// it at most one reader per connection, so it is not bounded further:
// WithMaxConnections bounds it. TTHeader handlers run on the handler pool,
// of at most handlerPool goroutines; past them, requests read wait in the
// pool's queue, in order, for a handler to return (WithMaxInFlight bounds
// them). However many handlers block, connections are still read: a
// request that would unblock them, a new connection, a close.
const (
	handlerPool = gopool.DefaultMaxWorkers
	readerPool  = math.MaxInt
)

// shutdownPools waits for the goroutines of both pools to end, readers
// first (a reader may still hand a request to the handler pool), as ctx
// allows.
func shutdownPools(ctx context.Context, readers, handlers *gopool.Pool) error {
	err := readers.Shutdown(ctx)
	if e := handlers.Shutdown(ctx); err == nil {
		err = e
	}
	return err
}

// endFailed ends serving after the listener failed, as Stop does and
// within the exit wait time: requests read from now on are refused as
// shutting down, those in flight are waited for until then, and the
// connections still open then are closed. Handlers still running then go
// on (Stop waits for them as its context allows); Serve does not wait for
// them without bound.
func (s *Server) endFailed(loop *netpoll.EventLoop, readers, pool *gopool.Pool) {
	limit, _ := s.drainAndClose(context.Background(), loop)
	ctx, cancel := context.WithDeadline(context.Background(), limit)
	defer cancel()
	shutdownPools(ctx, readers, pool)
}

// drainAndClose refuses new requests from now on, waits (see drain) until
// the connections are quiet or the exit wait time or ctx ends, and then
// shuts loop down, closing the connections still busy at the exit wait
// limit, which it returns. The error is drain's, or loop's when ctx ended.
func (s *Server) drainAndClose(ctx context.Context, loop *netpoll.EventLoop) (time.Time, error) {
	s.draining.Store(true)
	start := time.Now()
	s.lastRead.Store(start.UnixNano())
	limit := start.Add(s.cfg.exitWait)
	err := s.drain(ctx, limit)
	sctx, cancel := context.WithDeadline(ctx, limit)
	defer cancel()
	if e := loop.Shutdown(sctx); err == nil && ctx.Err() != nil {
		err = e
	}
	return limit, err
}

// sameListener reports whether a and b are the same listener, without the
// panic of == on values of a type that is not comparable.
func sameListener(a, b net.Listener) bool {
	if a == nil || b == nil {
		return false
	}
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}

// isNilPointer reports whether v holds a nil pointer.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// poolPanic and loopPanic count a panic outside a handler (a bug in Petrel:
// handler panics are recovered where they happen) and keep the last one for
// tests.
func (s *Server) poolPanic(ctx context.Context, r any, stack []byte) { s.loopPanic(r, stack) }

func (s *Server) loopPanic(r any, stack []byte) {
	s.stats.panics.Add(1)
	s.lastPanic.Store(fmt.Sprintf("%v\n%s", r, stack))
}

// Addr returns the address the server listens on: its listener's once Run
// or Serve has started, the WithListener listener's before; nil when neither
// is known yet.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.ln != nil:
		return s.ln.Addr()
	case s.cfg.ln != nil:
		return s.cfg.ln.Addr()
	}
	return nil
}

// Stop stops the server gracefully:
//
//  1. From now on requests the server reads are rejected at once with an
//     ApplicationException whose message says the server is shutting down
//     (rpcerr code ShuttingDown); oneway requests are still served. Every
//     TTHeader reply carries the "crrst" key that tells Kitex and Petrel
//     pooling clients not to reuse the connection.
//  2. Requests read before are served and answered.
//  3. When nothing is in flight and no request has arrived for a short quiet
//     period (or WithExitWaitTime has passed), the server stops accepting
//     and closes every connection once it is idle.
//
// With WithRegistry, the server is deregistered first, even when ctx has
// ended, and a failed deregistration is returned (with ctx.Err() if any).
// If ctx ends first, the remaining connections are closed at once and an
// error wrapping ctx.Err() is returned, saying how many requests were
// still in flight (handlers that had not returned) and connections open;
// connections still busy when the exit wait time ends are closed then.
// Stop returns after Run or Serve has returned
// (or when ctx ends). It may be called more than once: a later call
// returns nil once the first has returned, Run or Serve has too and the
// handlers still running have returned, or an error wrapping ctx.Err()
// when ctx ends first.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		serving, readers, pool := s.serving, s.readers, s.pool
		s.mu.Unlock()
		if err := waitDone(ctx, s.stopDone); err != nil || !serving {
			return err
		}
		// The first Stop may have returned at its context's end with
		// handlers still running: they are waited for as ctx allows.
		err := waitDone(ctx, s.served)
		if err == nil {
			err = shutdownPools(ctx, readers, pool)
		}
		if err != nil {
			return s.stopCutShort(err)
		}
		return nil
	}
	s.stopped = true
	defer close(s.stopDone)
	if !s.serving {
		s.mu.Unlock()
		return nil
	}
	loop, readers, pool := s.loop, s.readers, s.pool
	s.mu.Unlock()

	// Clients stop picking the server before it drains.
	regErr := s.deregister(ctx)
	_, err := s.drainAndClose(ctx, loop)
	// Handlers may still run (a connection closed under them): wait for
	// them as long as ctx allows.
	if e := shutdownPools(ctx, readers, pool); err == nil {
		err = e
	}
	select {
	case <-s.served:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	if err != nil && ctx.Err() != nil {
		// Say what Stop was still waiting for when ctx ended.
		err = s.stopCutShort(err)
	}
	if regErr != nil {
		err = errors.Join(err, regErr)
	}
	return err
}

// waitDone waits until ch is closed (nil) or ctx ends (ctx.Err()).
func waitDone(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	default:
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopCutShort is the error of a Stop that its context ended (err): it
// says what Stop was still waiting for.
func (s *Server) stopCutShort(err error) error {
	return fmt.Errorf("server: Stop ended by its context with %s in flight (handlers not returned) and %s open: %w",
		count(s.lim.InFlight(), "request", "requests"), count(s.lim.Connections(), "connection", "connections"), err)
}

// count returns n followed by the noun in the number n takes: "1 request",
// "0 requests", "2 requests".
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// drain waits until nothing is in flight and the connections are quiet, or
// the exit wait time or ctx ends.
func (s *Server) drain(ctx context.Context, limit time.Time) error {
	quiet := min(s.cfg.quiet, s.cfg.exitWait)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		if s.lim.InFlight() == 0 && now.Sub(time.Unix(0, s.lastRead.Load())) >= quiet {
			return nil
		}
		if !now.Before(limit) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Stats is a snapshot of a server's counters.
type Stats struct {
	// Connections is the number of open connections.
	Connections int64
	// RejectedConnections counts connections closed at once by
	// WithMaxConnections.
	RejectedConnections int64
	// RejectedQPS counts requests rejected by WithMaxQPS.
	RejectedQPS int64
	// RejectedInFlight counts requests rejected by WithMaxInFlight.
	RejectedInFlight int64
	// RejectedShuttingDown counts requests rejected because Stop was
	// draining the server.
	RejectedShuttingDown int64
	// Requests counts the requests read.
	Requests int64
	// InFlight is the number of requests read and not yet answered.
	InFlight int64
	// Panics counts recovered panics: in handlers (each answered with
	// INTERNAL_ERROR) and, for bugs, anywhere else in the server.
	Panics int64
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Connections:          s.lim.Connections(),
		RejectedConnections:  s.stats.rejectedConns.Load(),
		RejectedQPS:          s.stats.rejectedQPS.Load(),
		RejectedInFlight:     s.stats.rejectedInFl.Load(),
		RejectedShuttingDown: s.stats.rejectedStop.Load(),
		Requests:             s.stats.requests.Load(),
		InFlight:             s.lim.InFlight(),
		Panics:               s.stats.panics.Load(),
	}
}

// rejectErr returns the error a rejected request is answered with.
var (
	errShuttingDown = rpcerr.New(rpcerr.ShuttingDown, "server is shutting down")
)
