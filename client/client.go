package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/loadbalance"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// Client calls the methods of one service. It is safe for concurrent use;
// make one per service and share it.
type Client struct {
	service   string
	cfg       config
	protoName string
	res       resolver
	ep        endpoint.Endpoint // the middleware chain around invoke
	dialer    dialer
	pool      connPool             // short and long pools; nil with mux
	mux       *muxPool             // nil without mux
	fb        loadbalance.Feedback // WithLoadBalancer's, told each call's outcome; nil: none

	seq        atomic.Int32
	closed     atomic.Bool
	closeDials context.CancelFunc // ends dials in progress (Close)
	timeout    msCache            // text of the last KeyRPCTimeout sent
}

// New returns a client of service (the callee's service name, sent in
// TTHeader and shown in rpcinfo) configured by opts. It dials nothing: the
// first call to each address connects.
func New(service string, opts ...Option) (*Client, error) {
	if service == "" {
		return nil, errors.New("client: New needs the callee's service name")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("client: New got a nil Option")
		}
		o.apply(&cfg)
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	// Both say where the calls go; one would be silently unused.
	if cfg.disc.resolver != nil && len(cfg.addrs) > 0 {
		return nil, errors.New("client: WithHostPorts and WithResolver both give the servers; use one")
	}
	// WithHostPorts' addresses are checked whoever balances over them (the
	// round robin here, or WithLoadBalancer's balancer).
	for _, a := range cfg.addrs {
		if err := checkHostPort(cfg.network, a); err != nil {
			return nil, err
		}
	}
	if cfg.resolver == nil && !cfg.disc.used() {
		if len(cfg.addrs) == 0 {
			return nil, errors.New("client: no server address; use WithHostPorts")
		}
		cfg.resolver = &roundRobin{addrs: cfg.addrs}
	}
	if cfg.pool == poolMux && cfg.protocol != transport.TTHeader {
		return nil, errors.New("client: WithMuxConnection needs the TTHeader transport (replies are matched by sequence id), not " + cfg.protocol.String())
	}
	c := &Client{
		service:   service,
		cfg:       cfg,
		protoName: cfg.protocol.String(),
		res:       cfg.resolver,
		dialer:    dialer{network: cfg.network, timeout: cfg.connectTimeout},
	}
	c.dialer.closing, c.closeDials = context.WithCancel(context.Background())
	switch cfg.pool {
	case poolShort:
		c.pool = &shortPool{d: &c.dialer}
	case poolMux:
		c.mux = newMuxPool(&c.dialer, cfg.muxConns, cfg.maxMessageSize, cfg.rpcTimeout)
	default:
		c.pool = newLongPool(&c.dialer, cfg.long)
	}
	if cfg.disc.used() {
		if err := c.useDiscovery(); err != nil {
			c.Close()
			return nil, err
		}
	}
	mws := cfg.middleware
	if gov := c.governance(); len(gov) > 0 {
		mws = append(mws[:len(mws):len(mws)], gov...)
	}
	c.ep = endpoint.Chain(mws...)(c.invoke)
	return c, nil
}

// Call performs one call of method: it writes args, waits for the reply and
// decodes it into result. For a oneway method (oneway true; result may be
// nil) it returns once the request is written.
//
// The call ends at the earliest of ctx's deadline and its timeout: the
// call's own (WithCallTimeout), else its method's (WithMethodTimeout), else
// the client's (WithRPCTimeout); it then returns an
// error of code rpcerr.Timeout, which is a net.Error with Timeout() true,
// and a reply arriving later is discarded. A deadline past 2262 (a timeout
// of math.MaxInt64) is in effect none. Other failures:
//   - rpcerr.Canceled: ctx was canceled; the error wraps ctx.Err(). A
//     call waiting for its reply stops waiting at once, on every pool (the
//     short and long pools close its connection). In the short and long
//     pools so does a request still being written (a Flush waiting for
//     room in the socket), whose connection, holding part of a request,
//     is closed. On the multiplexed pool, where one flush carries the
//     requests of several calls and is bounded by the latest of their
//     deadlines, a call whose request holds args' memory by reference
//     (strings and binaries of buf.NocopyThreshold bytes and more) returns,
//     canceled or timed out, only once that flush has ended, as does a
//     call whose own write does the flush, and one whose write waits for
//     the connection's write lock while another caller's flush (of a
//     oneway request, or of the 16th request of a batch) holds it;
//   - rpcerr.Connection: dialing, writing or reading failed (the connection
//     is closed and the pool replaces it);
//   - rpcerr.Protocol: the reply's bytes were bad or over WithMaxMessageSize;
//   - rpcerr.Application: the server answered with a TApplicationException
//     (errors.As reaches the *thrift.ApplicationException);
//   - rpcerr.Overloaded, rpcerr.ShuttingDown: a Petrel server refused the
//     request (its INTERNAL_ERROR exception names the code; see
//     rpcerr.CodeFromMessage). A request refused because its server is
//     shutting down did not run there: the client sends it to another
//     instance first, if discovery offers one, whatever the retry policy;
//   - *rpcerr.BizStatusError: the server's handler returned a business
//     status (TTHeader only).
//
// An exception the IDL declares is not an error of Call: it is decoded into
// its field of result, and the generated stub returns it (result's
// GetError). Call returns nil then.
func (c *Client) Call(ctx context.Context, method string, oneway bool, args, result thrift.FastCodec, opts ...CallOption) error {
	if c.closed.Load() && c.cfg.tracer == nil {
		return errClientClosed // with a tracer, callTraced reports it
	}
	if ctx == nil {
		ctx = context.Background()
	}
	cs := getCallState(ctx)
	timeout := c.cfg.timeoutOf(method)
	for _, o := range opts {
		if o != nil {
			o.applyCall(&cs.cc)
		}
	}
	if cs.cc.hasTimeout {
		timeout = cs.cc.timeout
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	} else if timeout < 0 { // WithCallTimeout's: the call's time is spent
		deadline = time.Now()
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline, cs.ctxDeadline = d, true
	}
	cs.setDeadline(deadline)
	cs.oneway = oneway
	ri := &cs.ri
	ri.Caller = c.cfg.caller
	ri.Callee = c.service
	ri.Method = method
	ri.SeqID = c.seq.Add(1)
	ri.Timeout = timeout
	ri.Protocol = c.protoName
	var resp any
	if result != nil {
		resp = result
	}
	if c.cfg.tracer != nil {
		err := c.callTraced(cs, args, result, resp)
		putCallState(cs)
		return err
	}
	err := c.ep(cs.c, args, resp)
	putCallState(cs)
	return err
}

// Close closes the client's connections and waits for the goroutines
// reading them. A call in progress that waits for its reply (or for its
// request to be written) fails at once with an rpcerr.Connection error
// saying the client is closed, and so do later calls. Closing is the
// caller's own doing: the circuit breakers' default counting
// (circuitbreak.DefaultCounts) leaves these failures out, as it does
// canceled calls (rpcerr.Abandoned reports them), so that a breaker shared
// with another client of the service does not open.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.closeDials()
	if d, ok := c.res.(*discoveryResolver); ok {
		d.stop()
	}
	if c.pool != nil {
		c.pool.close()
	}
	if c.mux != nil {
		c.mux.close()
	}
	return nil
}

// invoke is the innermost endpoint: one request and its reply.
func (c *Client) invoke(ctx context.Context, req, resp any) error {
	cs := stateOf(ctx)
	if cs == nil {
		return rpcerr.New(rpcerr.Internal, "client: a middleware replaced the call's context with one not derived from it")
	}
	args, ok := req.(thrift.FastCodec)
	if !ok {
		return rpcerr.New(rpcerr.Internal, "client: the request is not a thrift.FastCodec")
	}
	var result thrift.FastCodec
	if resp != nil {
		if result, ok = resp.(thrift.FastCodec); !ok {
			return rpcerr.New(rpcerr.Internal, "client: the result is not a thrift.FastCodec")
		}
	} else if !cs.oneway {
		return rpcerr.New(rpcerr.Internal, "client: Call of a two-way method needs a result")
	}
	deadline := cs.deadline
	if ctx != context.Context(cs.c) {
		if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
			deadline = d
		}
	}
	if err := ctx.Err(); err != nil {
		return ctxError(err, "before calling "+cs.ri.Method)
	}
	// The deadline is checked before the pick, which the attempt then
	// reports to the balancer and the breaker whatever its outcome.
	if !c.header(ctx, cs, deadline, false) {
		return notSent(c.timeoutError(cs, deadline, ""))
	}
	addr, err := c.pick(ctx, cs, deadline)
	if err != nil {
		return notSent(err)
	}
	// A server that is shutting down refused the request before running it:
	// another instance may take it, whatever the retry policy, but never
	// one that refused it already, and at most drainPicks times. Not so for
	// a backup request's attempt: once written its request is the caller's
	// again (the call may have returned), and the retry middleware makes
	// any further attempt.
	var refused [drainPicks]string
	for n := 0; ; n++ {
		err = c.attempt(ctx, cs, addr, deadline, args, result)
		if rpcerr.CodeOf(err) != rpcerr.ShuttingDown || n == drainPicks || cs.gov.forked {
			return err
		}
		refused[n] = addr
		if !c.header(ctx, cs, deadline, true) {
			return err
		}
		next, ok := c.pickOther(ctx, cs, deadline, refused[:n+1], err)
		if !ok {
			return err
		}
		addr = next
	}
}

// attempt sends the call to addr once and reports its outcome to the load
// balancer and the instance's breaker. Each attempt of a call after the
// first takes a new sequence id.
func (c *Client) attempt(ctx context.Context, cs *callState, addr string, deadline time.Time, args, result thrift.FastCodec) error {
	if cs.seqUsed {
		cs.ri.SeqID = c.seq.Add(1)
	}
	cs.seqUsed = true
	var start time.Time
	if c.fb != nil {
		start = time.Now()
	}
	reported := false
	if c.fb != nil || cs.gov.breaker != nil {
		// A codec that panics (or calls runtime.Goexit) ends the call by
		// it; the pick is still reported, once, as loadbalance.Feedback
		// asks (P2C kept the address's call in flight for good), and the
		// breaker's ticket given back.
		defer func() {
			if reported {
				return
			}
			r := recover()
			why := "runtime.Goexit"
			if r != nil {
				why = fmt.Sprintf("a panic: %v", r)
			}
			// The client's own doing (a codec's bug), not the server's:
			// the breaker counts it neither way.
			c.attemptDone(cs, addr, start, &abandonedError{rpcerr.New(rpcerr.Internal, "client: the call of "+cs.ri.Method+" ended by "+why)})
			if r != nil {
				panic(r)
			}
		}()
	}
	var err error
	if c.mux != nil {
		err = c.callMux(ctx, cs, addr, deadline, args, result)
	} else {
		err = c.callPooled(ctx, cs, addr, deadline, args, result)
	}
	if err != nil {
		err = contextTimeout(cs, deadline, err)
	}
	reported = true
	c.attemptDone(cs, addr, start, err)
	return err
}

// attemptDone reports an attempt's end to the balancer and the instance
// breaker.
func (c *Client) attemptDone(cs *callState, addr string, start time.Time, err error) {
	if c.fb != nil {
		c.fb.Done(addr, time.Since(start), err)
	}
	if cs.gov.breaker != nil {
		c.instanceDone(cs, err)
	}
}

// drainPicks bounds the instances a call is sent to after refusals by
// servers that are shutting down, and the picks made to find each.
const drainPicks = 3

// pickOther picks an address none of refused, if discovery offers one
// within drainPicks picks and the call's context is still live. A pick of
// a refused address is reported to the balancer and the breaker with the
// refusal, as the attempt was.
func (c *Client) pickOther(ctx context.Context, cs *callState, deadline time.Time, refused []string, refusal error) (string, bool) {
	for range drainPicks {
		if ctx.Err() != nil {
			return "", false
		}
		addr, err := c.pick(ctx, cs, deadline)
		if err != nil {
			return "", false
		}
		if !slices.Contains(refused, addr) {
			return addr, true
		}
		if c.fb != nil {
			c.fb.Done(addr, 0, refusal)
		}
		c.instanceDone(cs, refusal)
	}
	return "", false
}

// header fills the request's TTHeader: callee, method, IDL service name
// and metainfo (the remaining timeout is stampTimeout's). It reports false,
// and fills nothing, when the deadline has passed; that is checked for a
// TTHeader request and for a request sent again (a first Framed or
// Buffered attempt leaves it to the connection pool, saving a clock read).
func (c *Client) header(ctx context.Context, cs *callState, deadline time.Time, again bool) bool {
	if !deadline.IsZero() && (again || c.cfg.protocol == transport.TTHeader) && time.Until(deadline) <= 0 {
		return false
	}
	h := &cs.hdr
	h.Reset()
	if c.cfg.protocol != transport.TTHeader {
		return true
	}
	h.SetInt(transport.KeyToService, c.service)
	if c.cfg.caller != "" {
		h.SetInt(transport.KeyFromService, c.cfg.caller)
	}
	h.SetInt(transport.KeyToMethod, cs.ri.Method)
	// The RPC timeout is set as the request is written (stampTimeout).
	// The string map is the call state's, kept by Reset: once made, the
	// same keys cost no allocation on later calls.
	if c.cfg.idlService != "" {
		h.SetStr(transport.StrKeyIDLService, c.cfg.idlService)
	}
	if metainfo.HasValues(ctx) {
		if h.StrInfo == nil {
			h.StrInfo = make(map[string]string, 8)
		}
		metainfo.ToWire(ctx, h.StrInfo)
	}
	return true
}

// stampTimeout puts the time the call has left (at least 1 ms) into its
// TTHeader as the request is about to be written: the pick and getting a
// connection (a first resolution, a dial) take time that the server's
// handler, bound by it, must not be given again.
func (c *Client) stampTimeout(cs *callState, deadline time.Time) {
	if deadline.IsZero() || c.cfg.protocol != transport.TTHeader {
		return
	}
	ms := max(int64(time.Until(deadline)/time.Millisecond), 1)
	cs.hdr.SetInt(transport.KeyRPCTimeout, c.timeout.text(ms))
}

func messageType(oneway bool) thrift.MessageType {
	if oneway {
		return thrift.ONEWAY
	}
	return thrift.CALL
}

// callPooled runs a call on a connection of its own (short and long pools):
// the caller writes, flushes and reads the reply itself.
func (c *Client) callPooled(ctx context.Context, cs *callState, addr string, deadline time.Time, args, result thrift.FastCodec) error {
	pc, err := c.pool.get(ctx, addr, deadline)
	if err != nil {
		return notSent(err)
	}
	// The connection goes back to the pool on every way out, reusable only
	// where a return says so: a codec's panic (a hand-written codec's bug)
	// mid-message closes it rather than leave it open until Close. (An
	// open-coded defer: it allocates nothing.)
	reusable := false
	defer func() { c.pool.put(pc, reusable) }()
	conn := pc.conn
	// The write of the request, while it waits for room in the socket,
	// and the read of the reply end as soon as ctx is canceled (ioError
	// then returns ctx's error, and the connection, out of step with part
	// of a request sent or a reply to come, is closed). Set on every call,
	// nil too (context.Background's): a pooled connection must not keep
	// watching an earlier call's channel.
	done := ctx.Done()
	conn.SetWriteCancel(done)
	conn.SetReadCancel(done)
	ri := &cs.ri
	ri.RemoteAddr, ri.LocalAddr = conn.RemoteAddr(), conn.LocalAddr()
	if !pc.arm(deadline) {
		reusable = true
		return notSent(c.timeoutError(cs, deadline, addr))
	}
	conn.SetWriteDeadline(deadline)
	c.stampTimeout(cs, deadline)
	w := conn.Writer()
	err = transport.WriteMessage(w, c.cfg.protocol, &cs.hdr, ri.Method, messageType(cs.oneway), ri.SeqID, args)
	if err != nil {
		cs.gov.requestWritten()
		return notSent(rpcerr.Wrap(rpcerr.Protocol, err, "encoding the request of "+ri.Method))
	}
	// Large binaries of args are linked into the output by reference: the
	// request is read until the flush ends.
	err = w.Flush()
	cs.gov.requestWritten()
	if err != nil {
		if early := c.earlyAnswer(ctx, cs, conn, err, addr); early != nil {
			return early
		}
		return c.ioError(ctx, cs, err, deadline, addr, "writing the request of "+ri.Method+" to "+addr)
	}
	if cs.tracing {
		cs.st.Send = time.Now()
	}
	if cs.oneway {
		reusable = true
		return nil
	}
	r := conn.Reader()
	rh := &cs.rhdr
	rh.Reset()
	name, typ, seq, body, err := transport.ReadMessage(r, c.cfg.protocol, c.cfg.maxMessageSize, rh)
	if err != nil {
		return c.ioError(ctx, cs, err, deadline, addr, "reading the reply of "+ri.Method+" from "+addr)
	}
	if cs.tracing {
		cs.st.Receive, cs.st.ResponseSize = time.Now(), len(body)
	}
	if seq != ri.SeqID {
		r.Release()
		return rpcerr.New(rpcerr.Protocol, "the reply to the call of "+ri.Method+" from "+addr+" has sequence id "+
			strconv.Itoa(int(seq))+", the request had "+strconv.Itoa(int(ri.SeqID))+" (BAD_SEQUENCE_ID)")
	}
	err = decodeReply(typ, name, body, result, rh, ri.Method, addr)
	r.Release()
	// Bytes after the reply (none are expected) would be read as the next
	// call's reply: such a connection is out of step.
	reusable = !serverAsksDrop(rh) && r.Len() == 0
	if err != nil {
		switch rpcerr.CodeOf(err) {
		case rpcerr.Application, rpcerr.Business, rpcerr.Overloaded, rpcerr.Timeout:
			// A whole reply was read: the connection is in step. (A
			// Timeout here is the server's exception, a handler's
			// timeout passed on: decodeReply reads no clock.) But a
			// PROTOCOL_ERROR exception says the server could not read
			// the request: a Petrel server closes the connection after
			// it (a request over its WithMaxMessageSize), which a
			// Framed or Buffered reply cannot say.
			reusable = reusable && !isProtocolException(err)
		default:
			reusable = false
		}
	}
	return err
}

// closedCh is closed: given to SetReadCancel, it fails at once every read
// that would wait.
var closedCh = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// earlyAnswer returns the exception the server answered the call with
// before its request was written whole, when all of it is in conn's input
// already; nil otherwise (the write's error, werr, then stands). A Petrel
// server answers a request over its WithMaxMessageSize so, from the
// request's head, and closes the connection with the rest unread: its
// kernel's reset then fails the write of the rest, though the exception,
// which says why, came first. It never waits for input (a read that would
// wait fails at once), and leaves the connection, which is closed after a
// failed write, out of step. Error path only.
func (c *Client) earlyAnswer(ctx context.Context, cs *callState, conn netpoll.Connection, werr error, addr string) error {
	r := conn.Reader()
	if r.Len() == 0 || ctx.Err() != nil || c.closed.Load() {
		return nil
	}
	conn.SetReadCancel(closedCh)
	rh := &cs.rhdr
	rh.Reset()
	_, typ, seq, body, err := transport.ReadMessage(r, c.cfg.protocol, c.cfg.maxMessageSize, rh)
	if err != nil {
		return nil
	}
	defer r.Release()
	ri := &cs.ri
	if typ != thrift.EXCEPTION || seq != ri.SeqID {
		return nil
	}
	ae := new(thrift.ApplicationException)
	if readBody(body, ae, rh) != nil {
		return nil
	}
	return rpcerr.Wrap(exceptionCode(ae), ae, "the server "+addr+" answered the call of "+ri.Method+
		" with an exception before its request was written whole (writing the rest failed: "+werr.Error()+")")
}

// ioError classifies a failed write or read of the short and long pools
// (deadline and addr: the attempt's). Close closes the connections calls
// wait on: their error says so.
func (c *Client) ioError(ctx context.Context, cs *callState, err error, deadline time.Time, addr, what string) error {
	if c.closed.Load() {
		return connError(errClientClosed, what)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxError(ctxErr, what)
	}
	if netpoll.IsTimeout(err) {
		return c.timeoutError(cs, deadline, addr)
	}
	if errors.Is(err, transport.ErrFrameTooLarge) {
		what += " (" + overMaxSize(c.cfg.maxMessageSize) + ")"
	}
	return connError(err, what)
}

// overMaxSize says which limit a reply over maxSize broke: the transport's
// error gives the numbers, not that the limit is the client's.
func overMaxSize(maxSize int) string {
	return "a reply over the client's WithMaxMessageSize of " + strconv.Itoa(maxSize) + " bytes"
}

// timeoutError is the error of a call whose deadline passed: deadline is
// the attempt's, addr its server ("" before the pick). It says which
// deadline that was: a middleware's context's (earlier than the call's),
// the caller's context's, or the one the RPC timeout set. (The context's
// own timer may not have marked it done yet when the connection's or the
// call's timer fires at the same deadline.) When a context's deadline
// passed, the error wraps context.DeadlineExceeded, as it does when the
// context was seen done first.
func (c *Client) timeoutError(cs *callState, deadline time.Time, addr string) error {
	return c.timeoutErrorWhile(cs, deadline, addr, "")
}

// muxWaitError returns the call's timeout error, saying where it waited,
// in place of err, a waitDeadlineError of the multiplexed pool's waits;
// any other err as it is. Error path only (w escapes: an allocation).
func (c *Client) muxWaitError(cs *callState, deadline time.Time, addr string, err error) error {
	var w *waitDeadlineError
	if !errors.As(err, &w) {
		return err
	}
	terr := c.timeoutErrorWhile(cs, deadline, addr, w.while)
	if rpcerr.NotSent(err) {
		return notSent(terr)
	}
	return terr
}

// timeoutErrorWhile is timeoutError whose message says, after "timed out",
// what the call was doing (while; "": waiting for its reply).
func (c *Client) timeoutErrorWhile(cs *callState, deadline time.Time, addr, while string) error {
	msg := "the call of " + cs.ri.Method
	if addr != "" {
		msg += " to " + addr
	}
	msg += " timed out" + while
	switch {
	case middlewareDeadline(cs, deadline):
		return rpcerr.Wrap(rpcerr.Timeout, context.DeadlineExceeded, msg+" (the deadline of a middleware's context)")
	case cs.ctxDeadline:
		return rpcerr.Wrap(rpcerr.Timeout, context.DeadlineExceeded, msg+" (the deadline of the caller's context)")
	case cs.ri.Timeout > 0:
		msg += " (RPC timeout " + cs.ri.Timeout.String() + ")"
	}
	return rpcerr.New(rpcerr.Timeout, msg)
}

// middlewareDeadline reports whether deadline, the attempt's, is a
// middleware's context's: earlier than the call's own, or the only one.
func middlewareDeadline(cs *callState, deadline time.Time) bool {
	return !deadline.IsZero() && (cs.deadline.IsZero() || deadline.Before(cs.deadline)) || cs.mwDeadline
}

// callMux runs a call on a shared connection: register, write (the last of
// concurrent writers flushes for all), wait for the reader goroutine.
func (c *Client) callMux(ctx context.Context, cs *callState, addr string, deadline time.Time, args, result thrift.FastCodec) error {
	ri := &cs.ri
	call := &cs.mc
	call.seq, call.method, call.result, call.err, call.panicked = ri.SeqID, ri.Method, result, nil, nil
	var mc *muxConn
	var err error
	for try := 0; ; try++ {
		if mc, err = c.mux.get(ctx, addr, deadline); err != nil {
			return notSent(c.muxWaitError(cs, deadline, addr, err))
		}
		if cs.oneway {
			break
		}
		if err = mc.register(call); err == nil {
			break
		}
		if try == 2 {
			return notSent(rpcerr.Wrap(rpcerr.Connection, err, "no usable connection to "+addr))
		}
	}
	ri.RemoteAddr, ri.LocalAddr = mc.conn.RemoteAddr(), mc.conn.LocalAddr()
	c.stampTimeout(cs, deadline)
	gen, err := mc.send(ctx, &cs.hdr, ri.Method, messageType(cs.oneway), ri.SeqID, args, deadline, call)
	if err != nil {
		err = c.muxWaitError(cs, deadline, addr, err)
	}
	if err != nil || cs.oneway || mc.flushGen.Load() >= gen {
		// The request has left (a oneway caller flushes its own), was
		// dropped, or was copied whole into the output (gen 0). Otherwise
		// another caller's flush will carry args' memory, and this call
		// ends (which a backup-request middleware also waits for) only
		// after that flush: see giveUp.
		cs.gov.requestWritten()
	}
	if cs.tracing && err == nil {
		cs.st.Send = time.Now()
	}
	if cs.oneway {
		return c.overdue(cs, deadline, addr, err)
	}
	if err != nil {
		// A write that failed and closed the connection leaves the call to
		// the reader, which delivers the reply already come (see
		// flushLocked) or fails the call as the connection ends.
		var ns *notSentError
		if (mc.conn.IsActive() || errors.As(err, &ns)) && mc.unregister(call) {
			return c.overdue(cs, deadline, addr, err)
		}
		<-call.ch // the connection failed and failed this call too
		return c.overdue(cs, deadline, addr, call.outcome())
	}
	replies := mc.replies.Load()
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return c.giveUp(mc, call, gen, c.timeoutError(cs, deadline, addr))
		}
		cs.timer.Reset(d)
		timeout = cs.timer.C
	}
	select {
	case <-call.ch:
		cs.timer.Stop()
		if cs.tracing {
			cs.st.Receive = time.Now()
		}
		return call.outcome()
	case <-timeout:
		mc.timedOut(mc.replies.Load() != replies)
		return c.giveUp(mc, call, gen, c.timeoutError(cs, deadline, addr))
	case <-ctx.Done():
		cs.timer.Stop()
		return c.giveUp(mc, call, gen, ctxError(ctx.Err(), "waiting for the reply of "+ri.Method))
	}
}

// overdue returns the call's timeout error in place of err, a connection
// error of a multiplexed call, when the call's deadline has passed: a
// flush bounded by it (the latest of its frames' deadlines) that could not
// finish fails the connection, but the call ran out of time, as Call says.
// A request never sent stays marked so. A client closed meanwhile keeps
// its error, as Close says. Error path only.
func (c *Client) overdue(cs *callState, deadline time.Time, addr string, err error) error {
	if err == nil || deadline.IsZero() || rpcerr.CodeOf(err) != rpcerr.Connection || c.closed.Load() || time.Now().Before(deadline) {
		return err
	}
	terr := c.timeoutError(cs, deadline, addr)
	if rpcerr.NotSent(err) {
		return notSent(terr)
	}
	return terr
}

// giveUp ends a multiplexed call that stops waiting: err if its reply had
// not come, else the reply's outcome (the reader was delivering it).
func (c *Client) giveUp(mc *muxConn, call *muxCall, gen uint64, err error) error {
	if mc.unregister(call) {
		mc.awaitFlush(gen)
		return err
	}
	<-call.ch
	mc.awaitFlush(gen)
	return call.outcome()
}
