package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/limit"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/stats"
	"github.com/petrel-rpc/petrel/transport"
)

// connState is the server's state of one connection.
//
// proto is written once by the connection's reader (OnRequest, which netpoll
// never runs twice at once) before any call goroutine starts, and read-only
// after. The Writer is used under wmu only.
type connState struct {
	s     *Server
	conn  netpoll.Connection
	proto transport.Protocol // see above

	wmu     sync.Mutex   // guards the connection's Writer and queued
	queued  int          // guarded by wmu: replies written and not flushed
	writers atomic.Int32 // goroutines writing or waiting for wmu

	// TTHeader requests of this connection read and not yet answered; each
	// holds the connection (netpoll Hold), so that a client that shuts down
	// its sending side after its requests still gets their replies.
	inflight      atomic.Int32
	inflightBytes atomic.Int64 // their messages' bytes
	// closing is set when the reader has met what ends the connection
	// (bad bytes, a request not arriving whole in time) while TTHeader
	// calls read before were in flight: the last of them closes it
	// (callDone), once their replies are written. ended is the reader's
	// own record of it: it drops whatever arrives after.
	closing atomic.Bool
	ended   bool // read and written by the reader (onRequest) only

	rd reqReader // the connection's Reader as onRequest reads requests

	reject  bool        // set in onPrepare, read in onConnect (same order as netpoll runs them)
	counted atomic.Bool // the connection holds a place in the server's limiter
}

type connKey struct{}

func (s *Server) onPrepare(conn netpoll.Connection) context.Context {
	cs := &connState{s: s, conn: conn}
	cs.rd = reqReader{Reader: conn.Reader(), cs: cs}
	if s.lim.AcquireConn() {
		cs.counted.Store(true)
		// The place is given back when the connection closes, not at
		// OnDisconnect: that runs at the peer's close (a half-close
		// too), while the server may still serve the connection and
		// write its replies. A client half-closing connections one after
		// another would otherwise hold any number of them open.
		conn.AddCloseCallback(func(netpoll.Connection) error {
			cs.releaseConn()
			return nil
		})
	} else {
		cs.reject = true
	}
	return context.WithValue(context.Background(), connKey{}, cs)
}

// releaseConn gives back the connection's place in WithMaxConnections'
// count, once.
func (cs *connState) releaseConn() {
	if cs.counted.CompareAndSwap(true, false) {
		cs.s.lim.ReleaseConn()
	}
}

func (s *Server) onConnect(ctx context.Context, conn netpoll.Connection) context.Context {
	if cs, _ := ctx.Value(connKey{}).(*connState); cs != nil && cs.reject {
		s.stats.rejectedConns.Add(1)
		conn.Close()
		// nil keeps the context set by onPrepare: netpoll does not store it
		// again.
		return nil
	}
	return ctx
}

// maxConnInflight bounds the TTHeader requests of one connection served
// at once, and maxConnInflightBytes their frames' bytes; beyond either the
// connection's reader serves requests itself. Each request read is copied
// out of the input into its arguments, so the input cap does not push
// back on a client that pipelines: counted alone, 1024 requests of the
// default WithMaxMessageSize held 16 GiB for one connection.
// The first call in flight runs on the pool whatever its size. A handler
// that waits for a later request of its own connection (a long poll
// another call releases) may wait for good past either bound, as the
// reader serves the request before it.
const (
	maxConnInflight      = 1024
	maxConnInflightBytes = 256 << 20
)

// maxQueued is the most replies a flush waits for: the in-order replies
// written while more requests are waiting (those answered without a
// handler: what is queued is flushed before a handler runs), and the
// concurrent ones (see write). Gathering every reply ready turns the
// connection into a convoy: the client gets nothing until the last
// handler has answered, and the server then waits idle while the client
// works on the whole batch. In batches of at most 16 each side works on
// one while the other makes the next (see muxFlushBatch in package
// client, which measured this).
const maxQueued = 16

// onRequest reads the requests that have arrived on a connection. TTHeader
// requests are served concurrently, each on a pool goroutine; Framed and
// Buffered ones in order on this goroutine. Their replies are flushed
// together, but for the replies queued when a handler is about to run,
// which are flushed first (see handle): a reply never waits for the
// handler of a request read after it.
func (s *Server) onRequest(ctx context.Context, conn netpoll.Connection) error {
	cs, _ := ctx.Value(connKey{}).(*connState)
	if cs == nil || cs.reject {
		return errors.New("server: connection without state")
	}
	r := &cs.rd
	if cs.ended {
		cs.dropInput()
		return nil
	}
	if cs.proto == 0 {
		p, err := transport.DetectReader(r)
		if err != nil {
			return err
		}
		cs.proto = p
	}
	concurrent := cs.proto == transport.TTHeader
	for {
		c := getCall()
		c.s, c.cs = s, cs
		name, typ, seq, body, err := transport.ReadMessage(r, cs.proto, s.cfg.maxMsgSize, &c.hdr)
		r.done()
		if err != nil {
			putCall(c)
			if errors.Is(err, transport.ErrFrameTooLarge) {
				cs.refuseOversized()
			} else if f, ok := transport.RefusedFrameOf(err); ok && cs.proto == transport.TTHeader {
				if cs.refuseFrame(f, err) {
					// The frame was consumed whole: the next one follows.
					r.Release()
					if r.Len() == 0 {
						break
					}
					continue
				}
			}
			cs.flushQueued()
			if concurrent {
				return cs.endAfterCalls(err)
			}
			return err
		}
		s.stats.requests.Add(1)
		if err := s.handle(c, name, typ, seq, body, concurrent); err != nil {
			cs.flushQueued()
			return err
		}
		if r.Len() == 0 {
			break
		}
		if !concurrent && cs.queuedLen() >= maxQueued {
			if err := cs.flushQueued(); err != nil {
				return err
			}
		}
	}
	return cs.flushQueued()
}

// oversizedHeadMax bounds the bytes refuseOversized reads the head of a
// request from: a TTHeader header of the largest size, a TTHeaderFramed
// length and a message header with a name of up to 4 KiB.
const oversizedHeadMax = 14 + transport.MaxHeaderSize + 4 + 4<<10

// refuseOversized answers the request at the front of the input, whose frame
// declares more bytes than WithMaxMessageSize allows (a Buffered one, which
// declares none, runs past the limit), with a PROTOCOL_ERROR exception
// saying its size and the limit, so that its client learns why the
// connection closes. The request's sequence id and method are read from
// the bytes already arrived, and only from the frame's head: it never waits
// for input nor reads the body. A request whose head has not arrived whole,
// is malformed, or is oneway is not answered.
func (cs *connState) refuseOversized() {
	s := cs.s
	r := cs.rd.Reader
	n := min(r.Len(), oversizedHeadMax)
	if n == 0 {
		return
	}
	b, err := r.Peek(n)
	if err != nil {
		return
	}
	var h transport.Header
	size, name, typ, seq, err := transport.ReadMessageHead(b, cs.proto, &h)
	if err != nil || typ != thrift.CALL || cs.proto != transport.Buffered && size <= uint64(s.cfg.maxMsgSize) {
		return
	}
	msg := fmt.Sprintf("server: request of %d bytes exceeds the limit of %d (server.WithMaxMessageSize)", size, s.cfg.maxMsgSize)
	if cs.proto == transport.Buffered {
		msg = fmt.Sprintf("server: request of more than %d bytes exceeds the limit (server.WithMaxMessageSize)", s.cfg.maxMsgSize)
	}
	name = bareMethod(string([]byte(name))) // copy: name aliases the input
	cs.refuse(h.Flags, seq, name, h.PayloadProtocol, true, msg)
}

// refuse answers a request that is not served (flags, seq, name and
// payload: its frame's and message's) with a PROTOCOL_ERROR exception
// saying msg. With closing, the connection closes after it: over TTHeader
// the reply carries crrst, so that a pooling client sends nothing more on
// it.
func (cs *connState) refuse(flags uint16, seq int32, name string, payload uint8, closing bool, msg string) error {
	c := getCall()
	c.s, c.cs = cs.s, cs
	h := &c.hdr
	h.Reset()
	h.Flags = flags
	if closing && cs.proto == transport.TTHeader {
		h.SetStr(transport.StrKeyConnReset, "1")
	}
	err := cs.write(h, name, thrift.EXCEPTION, seq, payload, thrift.NewApplicationException(thrift.ExceptionProtocolError, msg), false)
	putCall(c)
	return err
}

// refuseFrame answers the TTHeader request whose frame the transport
// refused for its header (err, describing f: an info block it cannot
// decode, a transform, a header size that does not fit) with a
// PROTOCOL_ERROR exception saying what was wrong, under the request's
// sequence id, flags and payload protocol, so that its client learns why
// it is not served. It reports whether the connection goes on: when the
// frame was consumed whole (its LENGTH and magic were good, so the next
// frame follows it), as after arguments that cannot be decoded; otherwise
// the reply carries crrst and the connection closes. A oneway request, or
// one in a payload protocol Petrel cannot write, is not answered.
func (cs *connState) refuseFrame(f transport.RefusedFrame, err error) bool {
	if f.HasMessage && f.Type == thrift.ONEWAY {
		return f.Whole
	}
	if f.PayloadProtocol != transport.PayloadBinary && f.PayloadProtocol != transport.PayloadCompact {
		return false
	}
	seq, name := f.SeqID, ""
	if f.HasMessage {
		seq, name = f.MessageSeqID, bareMethod(f.Name)
	}
	msg := err.Error()
	if e := (*rpcerr.Error)(nil); errors.As(err, &e) {
		msg = e.Msg
	}
	werr := cs.refuse(f.Flags, seq, name, f.PayloadProtocol, !f.Whole, "server: request refused: "+msg)
	if werr == nil && f.Whole {
		werr = cs.flushQueued()
	}
	return werr == nil && f.Whole
}

// reqReader is the connection's Reader as onRequest reads requests with
// it. onRequest runs only once input has arrived and never waits for a
// request that has not begun, so every wait here is for the rest of a
// request. Before a read that must wait, reqReader flushes the replies
// queued (the client may wait for them before it sends the rest), and the
// first wait of a request starts its read timeout: the whole rest of the
// request must arrive within it, however it trickles in. done ends the
// timeout once the request is read. Reads whose bytes are buffered cost
// nothing more than the connection's own.
type reqReader struct {
	buf.Reader
	cs    *connState
	timed bool // the read deadline is set for the request being read
}

// wait readies a read of n bytes.
func (r *reqReader) wait(n int) error {
	if n <= r.Reader.Len() {
		return nil
	}
	if err := r.cs.flushQueued(); err != nil {
		return err
	}
	if d := r.cs.s.cfg.readTimeout; d > 0 && !r.timed {
		r.timed = true
		r.cs.conn.SetReadDeadline(time.Now().Add(d))
	}
	return nil
}

// done ends the read of a request.
func (r *reqReader) done() {
	if r.timed {
		r.timed = false
		r.cs.conn.SetReadDeadline(time.Time{})
	}
}

func (r *reqReader) Next(n int) ([]byte, error) {
	if err := r.wait(n); err != nil {
		return nil, err
	}
	return r.Reader.Next(n)
}

func (r *reqReader) Peek(n int) ([]byte, error) {
	if err := r.wait(n); err != nil {
		return nil, err
	}
	return r.Reader.Peek(n)
}

func (r *reqReader) Skip(n int) error {
	if err := r.wait(n); err != nil {
		return err
	}
	return r.Reader.Skip(n)
}

func (r *reqReader) Until(delim byte) ([]byte, error) {
	if err := r.wait(r.Reader.Len() + 1); err != nil {
		return nil, err
	}
	return r.Reader.Until(delim)
}

func (r *reqReader) ReadByte() (byte, error) {
	if err := r.wait(1); err != nil {
		return 0, err
	}
	return r.Reader.ReadByte()
}

func (r *reqReader) ReadString(n int) (string, error) {
	if err := r.wait(n); err != nil {
		return "", err
	}
	return r.Reader.ReadString(n)
}

func (r *reqReader) ReadBinary(n int) ([]byte, error) {
	if err := r.wait(n); err != nil {
		return nil, err
	}
	return r.Reader.ReadBinary(n)
}

func (r *reqReader) Slice(n int) (buf.Reader, error) {
	if err := r.wait(n); err != nil {
		return nil, err
	}
	return r.Reader.Slice(n)
}

// callStarted and callDone count a TTHeader call in flight, of size bytes,
// and hold the connection for it. callStarted reports whether the calls
// in flight are within maxConnInflight and maxConnInflightBytes.
func (cs *connState) callStarted(size int64) bool {
	cs.conn.Hold()
	n := cs.inflight.Add(1)
	b := cs.inflightBytes.Add(size)
	return n <= maxConnInflight && (b <= maxConnInflightBytes || n == 1)
}

func (cs *connState) callDone(size int64) {
	cs.inflightBytes.Add(-size)
	if cs.inflight.Add(-1) == 0 && cs.closing.Load() {
		cs.conn.Close() // see endAfterCalls
	}
	cs.conn.Unhold()
}

// endAfterCalls ends a TTHeader connection whose reader met err. Calls
// read before and still being served are owed their replies: a client
// must not take a call the server ran for one it did not. So with calls
// in flight the reader stops reading, drops the input, and returns nil
// rather than err (which would close the connection at once); the last of
// the calls closes the connection.
func (cs *connState) endAfterCalls(err error) error {
	if cs.inflight.Load() == 0 {
		return err
	}
	cs.ended = true
	cs.closing.Store(true)
	// The last call may have ended between the two loads, before it could
	// see closing: then close here (a second Close does nothing).
	if cs.inflight.Load() == 0 {
		return err
	}
	cs.dropInput()
	return nil
}

// dropInput discards the connection's input (the reader's).
func (cs *connState) dropInput() {
	r := cs.rd.Reader
	r.Skip(r.Len())
	r.Release()
}

// handle dispatches one request read into c.hdr; body aliases the
// connection's input until it is released here.
func (s *Server) handle(c *call, name string, typ thrift.MessageType, seq int32, body []byte, concurrent bool) error {
	r := c.cs.conn.Reader()
	c.seq, c.size = seq, int64(len(body))
	c.payload = c.hdr.PayloadProtocol
	var now int64
	var t0 time.Time
	if s.lim.NeedsClock() || s.draining.Load() || s.cfg.tracer != nil || s.rejectTimed != nil || c.hdr.IntInfo[transport.KeyRPCTimeout] != "" {
		t0 = time.Now()
		now = t0.UnixNano()
	}
	if s.cfg.tracer != nil {
		// t0 itself, with its monotonic reading: the latency is then not
		// measured by the wall clock, which may step.
		c.st.Side, c.st.Begin, c.st.RequestSize = stats.Server, t0, len(body)
	}
	if s.draining.Load() {
		if now == 0 {
			// Stop began since the test above: the clock was not read.
			now = time.Now().UnixNano()
		}
		s.lastRead.Store(now)
	}
	if typ != thrift.CALL && typ != thrift.ONEWAY {
		msg := "server: message type " + typ.String() + " is not a call"
		name = string([]byte(name)) // copy: name aliases the input
		r.Release()
		return c.rejectAndFree(name, thrift.ExceptionInvalidMessageType, msg, !concurrent)
	}
	m := s.lookup(name, c.hdr.StrInfo[transport.StrKeyIDLService], c.hdr.IntInfo[transport.KeyToService])
	if m == nil {
		if typ == thrift.ONEWAY {
			r.Release()
			putCall(c)
			return nil
		}
		name = string([]byte(name)) // copy: name aliases the input
		r.Release()
		msg := s.unknownMethodText(name, c.hdr.StrInfo[transport.StrKeyIDLService])
		return c.rejectAndFree(bareMethod(name), thrift.ExceptionUnknownMethod, msg, !concurrent)
	}
	oneway := m.info.Oneway || typ == thrift.ONEWAY
	if !oneway && s.draining.Load() {
		r.Release()
		s.stats.rejectedStop.Add(1)
		return c.rejectAndFree(m.info.Name, thrift.ExceptionInternalError, errShuttingDown.Error(), !concurrent)
	}
	if why := s.lim.AcquireRequest(int64(t0.Sub(s.epoch))); why != limit.None {
		r.Release()
		if why == limit.QPS {
			s.stats.rejectedQPS.Add(1)
		} else {
			s.stats.rejectedInFl.Add(1)
		}
		if oneway {
			putCall(c)
			return nil
		}
		err := c.rejectAndFree(m.info.Name, thrift.ExceptionInternalError, s.lim.Message(why), !concurrent)
		if s.rejectTimed != nil {
			s.rejectTimed(time.Duration(time.Now().UnixNano() - now)) // tests (export_test.go)
		}
		return err
	}
	if !concurrent {
		// Replies queued for requests read before this one (pipelined) go
		// out before its handler runs: they must not wait for it, nor be
		// lost if decoding its arguments ends the reader (a codec calling
		// runtime.Goexit). Without pipelining nothing is queued here, and
		// this costs no write.
		if err := c.cs.flushQueued(); err != nil {
			// The connection is broken: the request is not served.
			s.lim.ReleaseRequest()
			putCall(c)
			return err
		}
	}
	args := m.getArgs()
	ctx, panicked, err := s.decodeArgs(args, body, c.payload)
	r.Release()
	if err != nil {
		if err != errArgsGoexit { // else given back and counted already
			if panicked {
				s.stats.panics.Add(1)
			}
			s.lim.ReleaseRequest()
		}
		m.putArgs(args)
		if oneway {
			putCall(c)
			return nil
		}
		return c.rejectAndFree(m.info.Name, thrift.ExceptionProtocolError,
			fmt.Sprintf("server: decoding the arguments of %s: %v", m.info.Name, err), !concurrent)
	}
	c.m, c.args, c.oneway, c.ctx = m, args, oneway, ctx
	if ms := c.hdr.IntInfo[transport.KeyRPCTimeout]; ms != "" {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil && n > 0 {
			// A timeout whose deadline is past what int64 nanoseconds hold
			// (year 2262) ends there instead of overflowing into the past.
			if n > (math.MaxInt64-now)/int64(time.Millisecond) {
				c.timeout = time.Duration(math.MaxInt64 - now)
			} else {
				c.timeout = time.Duration(n) * time.Millisecond
			}
			c.deadline = now + int64(c.timeout)
		}
	}
	if concurrent && c.cs.callStarted(c.size) {
		if s.pool.Submit(context.Background(), c.run) == nil {
			return nil
		}
		// The pool is shut down (Stop's time ran out while this request
		// was read): serve it here, on the reader, which Stop waits for,
		// rather than on a goroutine of its own that nothing waits for.
	}
	if concurrent {
		// Too many requests of this connection are being served (or the
		// pool is shut down): serve this one here. The reader stops
		// reading meanwhile, and netpoll stops reading the socket once its
		// input cap is reached, which pushes back on the client.
		c.serve(true)
		return nil
	}
	c.serve(false)
	return nil
}

// bareMethod returns name without the "Service:" prefix of Apache's
// multiplexed clients, which expect the reply under the bare method name.
func bareMethod(name string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// call is one request on its way through the server. Calls are pooled; a
// call belongs to one goroutine at a time (the reader, then the goroutine
// serving it).
type call struct {
	s        *Server
	cs       *connState
	m        *method
	hdr      transport.Header
	args     thrift.FastCodec
	ctx      *callCtx // made with the arguments (see decodeArgs)
	seq      int32
	size     int64 // of the request's message, for maxConnInflightBytes
	payload  uint8
	oneway   bool
	timeout  time.Duration
	deadline int64       // unix nanoseconds; 0 when none
	run      func()      // c.serveConcurrent, bound once
	st       stats.Stats // with a tracer: the call's stats (option_tracer.go); Side 0 without
}

var callPool sync.Pool

func init() {
	callPool.New = func() any {
		c := new(call)
		c.run = c.serveConcurrent
		return c
	}
}

func getCall() *call { return callPool.Get().(*call) }

func putCall(c *call) {
	c.s, c.cs, c.m, c.args, c.ctx = nil, nil, nil, nil, nil
	c.seq, c.size, c.payload, c.oneway, c.timeout, c.deadline = 0, 0, 0, false, 0, 0
	if c.st.Side != 0 {
		c.st.Reset()
	}
	c.hdr.Reset()
	callPool.Put(c)
}

func (c *call) serveConcurrent() { c.serve(true) }

// aclTokenKey is the wire key of the transient metainfo value that Kitex
// carries in TTHeader's ACL token block.
const aclTokenKey = metainfo.PrefixTransient + "gdpr-token"

// serve runs the handler and writes the reply (flushing it if flush).
func (c *call) serve(flush bool) {
	s, m := c.s, c.m
	var base context.Context = context.Background()
	if c.hdr.ACLToken != "" {
		// A Kitex client sends the transient value gdpr-token as the ACL
		// token block; its handler reads it as metainfo, as a Kitex
		// server's does. A value also sent as a key wins.
		if _, ok := c.hdr.StrInfo[aclTokenKey]; !ok {
			c.hdr.SetStr(aclTokenKey, c.hdr.ACLToken)
		}
	}
	if len(c.hdr.StrInfo) > 0 {
		base = metainfo.FromWire(base, c.hdr.StrInfo)
	}
	ctx := c.ctx
	ctx.parent, ctx.m = base, m
	ri := &ctx.ri
	ri.Caller = c.hdr.IntInfo[transport.KeyFromService]
	ri.Callee = m.svc.info.Name
	ri.Method = m.info.Name
	ri.SeqID = c.seq
	ri.Timeout = c.timeout
	ri.Protocol = c.cs.proto.String()
	ri.LocalAddr = c.cs.conn.LocalAddr()
	ri.RemoteAddr = c.cs.conn.RemoteAddr()
	if c.deadline != 0 {
		ctx.deadline = time.Unix(0, c.deadline)
	}
	result := m.getResult()
	// What follows the handler is deferred, so that it is done also when
	// the handler ends its goroutine with runtime.Goexit.
	defer c.free(result)
	if s.cfg.tracer != nil {
		c.serveTraced(ctx, result, flush) // option_tracer.go
		return
	}
	err := errGoexit // unless the handler returns
	defer func() {
		ctx.finish()
		// The handler is done: free its in-flight place before the reply is
		// written, so that a client answered at once never finds it taken.
		s.lim.ReleaseRequest()
		if !c.oneway {
			c.writeReply(result, err, flush || err == errGoexit)
		}
		if err == errGoexit && !flush {
			c.cs.answerUnserved(c.m.info.Name, c.seq)
		}
	}()
	err = c.invoke(ctx, result)
}

// errGoexit answers a call whose handler called runtime.Goexit. The reply
// is flushed at once: the goroutine that would flush it later is ending.
var errGoexit error = rpcerr.New(rpcerr.Internal, "server: the handler called runtime.Goexit")

// answerUnserved is called on a Framed or Buffered connection's reader
// when the handler of the request name (seq), or the tracer's Start or
// Finish for it, has called runtime.Goexit,
// which ends the reader, and netpoll closes the connection when it has.
// The requests read with that one, waiting in the input, cannot be served
// any more: each is answered with an INTERNAL_ERROR saying so (oneway ones
// excepted), so that no client waits for a reply that never comes; a
// request not arrived whole is not answered. The replies queued are
// flushed. It never waits for input.
func (cs *connState) answerUnserved(name string, seq int32) {
	s := cs.s
	r := cs.rd.Reader
	if n := r.Len(); n > 0 {
		if b, err := r.Peek(n); err == nil {
			// Read from a copy of what has arrived, which ends where the
			// input does instead of waiting for more.
			in := buf.NewLinkBufferFrom(b)
			msg := fmt.Sprintf("server: not served: serving %s (seq %d), read before it on this connection, called runtime.Goexit, which ends the connection", name, seq)
			for in.Len() > 0 {
				c := getCall()
				c.s, c.cs = s, cs
				mname, typ, mseq, _, err := transport.ReadMessage(in, cs.proto, s.cfg.maxMsgSize, &c.hdr)
				if err != nil {
					putCall(c)
					break
				}
				s.stats.requests.Add(1)
				c.seq, c.payload = mseq, c.hdr.PayloadProtocol
				m := s.lookup(mname, c.hdr.StrInfo[transport.StrKeyIDLService], c.hdr.IntInfo[transport.KeyToService])
				if typ == thrift.ONEWAY || (m != nil && m.info.Oneway) {
					putCall(c)
					continue
				}
				var reply string
				if m != nil {
					reply = m.info.Name
				} else {
					reply = bareMethod(string([]byte(mname))) // copy: mname aliases the input
				}
				if c.rejectAndFree(reply, thrift.ExceptionInternalError, msg, true) != nil {
					break
				}
			}
			in.Release()
		}
	}
	cs.flushQueued()
}

// free gives back what serve used and ends the call.
func (c *call) free(result thrift.FastCodec) {
	c.m.putArgs(c.args)
	c.m.putResult(result)
	cs, size := c.cs, c.size
	putCall(c)
	if cs.proto == transport.TTHeader {
		cs.callDone(size)
	}
}

// invoke runs the middleware and the handler, turning a panic into an
// Internal error.
func (c *call) invoke(ctx context.Context, result thrift.FastCodec) error {
	nilPanic, err := c.invokeRecover(ctx, result)
	if nilPanic {
		// Counted here, not in invokeRecover's deferred function, which
		// runtime.Goexit runs too.
		c.s.stats.panics.Add(1)
	}
	return err
}

// invokeRecover is invoke but for counting a panic with a nil value under
// GODEBUG panicnil=1 (nilPanic).
func (c *call) invokeRecover(ctx context.Context, result thrift.FastCodec) (nilPanic bool, err error) {
	returned := false
	defer func() {
		r := recover()
		if r == nil && !returned {
			// The handler neither returned nor left a value to recover:
			// it called runtime.Goexit, which goes on ending the goroutine
			// (serve answers the call), or it panicked with nil in a
			// program whose GODEBUG has panicnil=1 (a go.mod before Go
			// 1.21), which this recover has ended: only then does invoke
			// see what is set here.
			err, nilPanic = rpcerr.New(rpcerr.Internal, fmt.Sprintf("panic in handler %s.%s: panic with a nil value", c.m.svc.info.Name, c.m.info.Name)), true
			return
		}
		if r != nil {
			c.s.stats.panics.Add(1)
			err = rpcerr.New(rpcerr.Internal, fmt.Sprintf("panic in handler %s.%s: %v", c.m.svc.info.Name, c.m.info.Name, r))
		}
	}()
	var resp any
	if result != nil {
		resp = result
	}
	err = c.s.ep(ctx, c.args, resp)
	returned = true
	return false, err
}

// writeReply answers the call: the result, or an exception for err.
func (c *call) writeReply(result thrift.FastCodec, err error, flush bool) {
	h := &c.hdr
	flags := h.Flags
	h.Reset()
	h.Flags = flags
	typ := thrift.REPLY
	var body thrift.FastCodec = result
	if err != nil {
		typ, body = c.errorReply(h, result, err)
	}
	c.cs.write(h, c.m.info.Name, typ, c.seq, c.payload, body, flush)
}

// errorReply returns the reply to a call that failed with err: an
// exception, or result with the business status keys set in h for a
// *rpcerr.BizStatusError over TTHeader. An err that is a nil pointer (a
// function declared to return *rpcerr.Error that returns nil, assigned to
// error) is answered with INTERNAL_ERROR saying so, and so is one whose
// methods (Error, Unwrap, As) panic: the call is still answered.
func (c *call) errorReply(h *transport.Header, result thrift.FastCodec, err error) (typ thrift.MessageType, body thrift.FastCodec) {
	defer func() {
		r := recover()
		if r == nil && body == nil {
			// Not returned: a panic with nil under GODEBUG panicnil=1
			// (or runtime.Goexit, which goes on ending the goroutine).
			r = "a nil value"
		}
		if r != nil {
			c.s.stats.panics.Add(1)
			typ, body = thrift.EXCEPTION, thrift.NewApplicationException(thrift.ExceptionInternalError,
				fmt.Sprintf("server: reading the error (%T) that the handler of %s.%s returned panicked: %v", err, c.m.svc.info.Name, c.m.info.Name, r))
		}
	}()
	if isNilPointer(err) {
		return thrift.EXCEPTION, thrift.NewApplicationException(thrift.ExceptionInternalError,
			fmt.Sprintf("server: the handler of %s.%s returned a nil %T as its error", c.m.svc.info.Name, c.m.info.Name, err))
	}
	var biz *rpcerr.BizStatusError
	var ae *thrift.ApplicationException
	switch {
	case errors.As(err, &biz) && biz != nil && biz.StatusCode != 0 && c.cs.proto == transport.TTHeader:
		// A status of 0 reads as no error at the client (as Kitex reads
		// it): such an error goes as any other, an INTERNAL_ERROR with its
		// text, as it does over Framed and Buffered.
		h.SetStr(transport.StrKeyBizStatus, strconv.FormatInt(int64(biz.StatusCode), 10))
		h.SetStr(transport.StrKeyBizMessage, cutBizText(biz.Message))
		if len(biz.Extra) > 0 {
			if b, jerr := json.Marshal(biz.Extra); jerr == nil && len(b) <= bizTextMax {
				h.SetStr(transport.StrKeyBizExtra, string(b))
			}
		}
		return thrift.REPLY, result
	case errors.As(err, &ae) && ae != nil:
		// e.g. a downstream call's exception, passed on
		if msg := handlerErrorText(ae.Message); ae.Type == thrift.ExceptionInternalError && msg != ae.Message {
			ae = thrift.NewApplicationException(ae.Type, msg)
		}
		return thrift.EXCEPTION, ae
	}
	msg := handlerErrorText(err.Error())
	if _, ok := rpcerr.CodeFromMessage(msg); !ok && errors.Is(err, context.DeadlineExceeded) {
		// The handler gave up at a deadline, most often its context's,
		// which is the caller's: said as a Petrel timeout, the caller
		// reads it as one (a Timeout error) and not as the handler's
		// failure, whichever of the reply and its own timer comes first.
		msg = rpcerr.New(rpcerr.Timeout, "the handler of "+c.m.svc.info.Name+"."+c.m.info.Name+" returned "+msg).Error()
	}
	return thrift.EXCEPTION, thrift.NewApplicationException(thrift.ExceptionInternalError, msg)
}

// bizTextMax bounds the business status message, and its extra as JSON,
// that a reply's TTHeader carries: the whole header holds 64 KiB, and a
// reply whose header does not fit is answered with an INTERNAL_ERROR, its
// status lost. A longer message is cut (cutBizText); a longer extra is
// left out. The status code always goes.
const bizTextMax = 16 << 10

// cutBizText returns msg, or its first bizTextMax bytes or fewer, ending
// at a character's boundary, marked as cut.
func cutBizText(msg string) string {
	if len(msg) <= bizTextMax {
		return msg
	}
	const mark = "... (cut)"
	n := bizTextMax - len(mark)
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return msg[:n] + mark
}

// handlerErrorText is the message of the INTERNAL_ERROR exception that
// answers a handler's error whose text is msg. A client reads the text of a Petrel error at
// the start of that message as this server's own verdict ("petrel:
// shutting_down: ..." or "petrel: overloaded: ...": the request was refused
// before it ran, so it may be sent again even if not idempotent), so a
// handler's error that reads so (a downstream call's error passed on) is
// marked as the handler's; so is a downstream refusal's exception that the
// handler returns as it got it. A timeout keeps its text: the caller reads
// it as a timeout, which is never taken for a call that did not run.
func handlerErrorText(msg string) string {
	if code, ok := rpcerr.CodeFromMessage(msg); ok && (code == rpcerr.ShuttingDown || code == rpcerr.Overloaded) {
		return "the handler failed: " + msg
	}
	return msg
}

// rejectAndFree answers the request in c with an exception and frees c.
// Unless inOrder (the reply then waits for the reader's flushQueued), the
// rejection is flushed at once, without the yield that lets concurrent
// replies share a write: a limit's rejection must not wait.
func (c *call) rejectAndFree(name string, kind int32, msg string, inOrder bool) error {
	h := &c.hdr
	flags := h.Flags
	h.Reset()
	h.Flags = flags
	cs := c.cs
	err := cs.write(h, name, thrift.EXCEPTION, c.seq, c.payload, thrift.NewApplicationException(kind, msg), false)
	putCall(c)
	if err == nil && !inOrder {
		err = cs.flushQueued()
	}
	return err
}

// write writes one reply. With flush, the last of the goroutines writing at
// once flushes for all, and so does the writer of the maxQueued-th reply
// since the last flush; otherwise the reply waits for flushQueued.
func (cs *connState) write(h *transport.Header, name string, typ thrift.MessageType, seq int32, payload uint8, body thrift.FastCodec, flush bool) error {
	h.Protocol = cs.proto
	h.SeqID = seq
	h.PayloadProtocol = payload
	if cs.proto == transport.TTHeader && cs.s.draining.Load() {
		h.SetStr(transport.StrKeyConnReset, "1")
	}
	cs.writers.Add(1)
	cs.wmu.Lock()
	w := cs.conn.Writer()
	err := cs.writeMessage(w, h, name, typ, seq, body)
	if err != nil {
		if err = cs.writeUnencodable(w, h, name, seq, payload, err); isUnlocked(err) {
			return err // see writeMessage
		}
	}
	if err == nil {
		cs.queued++
	}
	last := cs.writers.Add(-1) == 0
	if flush && cs.queued > 0 && (last || cs.queued >= maxQueued) {
		if cs.queued < maxQueued && cs.inflight.Load() > 1 {
			// Other requests of this connection are being served: yield
			// once so that those ready to answer add their replies, and
			// one write carries them all. With one processor the handlers
			// run one after another, so without this no two replies would
			// ever share a flush.
			cs.wmu.Unlock()
			runtime.Gosched()
			cs.wmu.Lock()
		}
		if cs.queued > 0 {
			cs.queued = 0
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
		}
	}
	cs.wmu.Unlock()
	if err != nil {
		// A reply half written would corrupt the stream: give up on it.
		cs.conn.Close()
	}
	return err
}

// writeMessage is transport.WriteMessage with a panic of the body's codec
// (a hand-written codec's bug, a response changed by another goroutine
// while it is written) turned into an error, so that write never leaves the
// write lock held. The part of the reply written before the panic is
// withdrawn from w when it can be (the error is then withdrawn), so that
// the replies written before it, not yet sent, still go out and the call
// can be answered in its place. It is called by write only, with the write
// lock held.
func (cs *connState) writeMessage(w buf.Writer, h *transport.Header, name string, typ thrift.MessageType, seq int32, body thrift.FastCodec) (err error) {
	returned := false
	mark := w.MallocLen()
	defer func() {
		r := recover()
		if r == nil && !returned {
			// The codec called runtime.Goexit, which goes on ending the
			// goroutine past write, or panicked with nil under GODEBUG
			// panicnil=1 (a go.mod before Go 1.21), which recover ends
			// without a value. Either way what write holds is given back
			// here, so that the connection's other replies and Stop do
			// not wait for ever, and the connection is closed; write
			// returns at once.
			cs.s.stats.panics.Add(1)
			cs.writers.Add(-1)
			cs.wmu.Unlock()
			cs.conn.Close()
			err = &replyPanicError{error: rpcerr.New(rpcerr.Internal, fmt.Sprintf("server: the codec of the reply of %s panicked with a nil value or called runtime.Goexit", name)), unlocked: true}
			return
		}
		if r != nil {
			cs.s.stats.panics.Add(1)
			err = &replyPanicError{error: rpcerr.New(rpcerr.Internal, fmt.Sprintf("server: panic writing the reply of %s: %v", name, r)), withdrawn: withdraw(w, mark)}
		}
	}()
	err = transport.WriteMessage(w, cs.proto, h, name, typ, seq, body)
	returned = true
	return err
}

// replyPanicError is the error of a reply whose codec panicked, which
// left part of the reply in the connection's Writer unless withdrawn.
// unlocked: the write lock is given back and the connection closed (see
// writeMessage).
type replyPanicError struct {
	error
	unlocked  bool
	withdrawn bool
}

// withdraw drops what was written to w after its first mark bytes since
// its last Flush, and reports whether it could.
func withdraw(w buf.Writer, mark int) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return w.MallocLen() >= mark && w.MallocAck(mark) == nil
}

func (e *replyPanicError) Unwrap() error { return e.error }

// isUnlocked reports whether err is a replyPanicError that gave back the
// write lock.
func isUnlocked(err error) bool {
	e, ok := err.(*replyPanicError)
	return ok && e.unlocked
}

// writeUnencodable is called under wmu when the reply of name (seq) could
// not be encoded (err): a header value too large for TTHeader (a business
// status message over 64 KiB), a body whose BLength is wrong, a codec that
// panicked. Such a reply left nothing in w, so it is answered in its place
// with an INTERNAL_ERROR exception saying why, and the connection goes on
// serving (on TTHeader, the other calls in flight keep their replies). A
// reply whose codec panicked and whose part written could not be withdrawn
// from w: err is returned, and write closes the connection. So it does if
// the exception cannot be written.
func (cs *connState) writeUnencodable(w buf.Writer, h *transport.Header, name string, seq int32, payload uint8, err error) error {
	if pe, ok := err.(*replyPanicError); ok && !pe.withdrawn {
		return err
	}
	flags := h.Flags
	h.Reset()
	h.Protocol, h.SeqID, h.Flags, h.PayloadProtocol = cs.proto, seq, flags, payload
	if cs.proto == transport.TTHeader && cs.s.draining.Load() {
		h.SetStr(transport.StrKeyConnReset, "1")
	}
	ex := thrift.NewApplicationException(thrift.ExceptionInternalError,
		fmt.Sprintf("server: the reply of %s could not be encoded: %v", name, err))
	if werr := cs.writeMessage(w, h, name, thrift.EXCEPTION, seq, ex); werr != nil {
		if isUnlocked(werr) {
			return werr
		}
		return errors.Join(err, werr)
	}
	return nil
}

func (cs *connState) queuedLen() int {
	cs.wmu.Lock()
	defer cs.wmu.Unlock()
	return cs.queued
}

// flushQueued flushes replies written without a flush.
func (cs *connState) flushQueued() error {
	cs.wmu.Lock()
	defer cs.wmu.Unlock()
	if cs.queued == 0 {
		return nil
	}
	cs.queued = 0
	return cs.conn.Writer().Flush()
}
