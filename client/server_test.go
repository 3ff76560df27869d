package client_test

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// testServer is a small Thrift server for the client's tests, on the net
// package (so that it can reset connections), speaking every transport the
// client does. It answers the method "echo" as its arguments' Mode says;
// any other method gets UNKNOWN_METHOD. A request with SleepMs > 0 is
// answered from a goroutine of its own, so that replies on one connection
// can come out of order.
type testServer struct {
	ln net.Listener

	accepted atomic.Int32 // connections accepted so far
	requests atomic.Int32 // requests read so far
	oneways  atomic.Int32 // oneway requests read so far

	mu     sync.Mutex
	conns  map[*srvConn]struct{} // guarded by mu
	closed bool                  // guarded by mu
	wg     sync.WaitGroup
	lastTO atomic.Value // string: the last KeyRPCTimeout received
	lastMI atomic.Value // map[string]string: the last StrInfo received
}

type srvConn struct {
	conn net.Conn
	wmu  sync.Mutex // guards writes of replies
}

func startServer(tb testing.TB) *testServer {
	tb.Helper()
	s, err := newTestServer()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

func newTestServer() (*testServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &testServer{ln: ln, conns: make(map[*srvConn]struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *testServer) Addr() string { return s.ln.Addr().String() }

func (s *testServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		sc := &srvConn{conn: c}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[sc] = struct{}{}
		s.accepted.Add(1)
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(sc)
	}
}

// Close stops the server and closes every connection.
func (s *testServer) Close() {
	s.mu.Lock()
	s.closed = true
	for sc := range s.conns {
		sc.conn.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

// CloseConns closes every connection gracefully (FIN), keeping the listener.
func (s *testServer) CloseConns() {
	s.mu.Lock()
	for sc := range s.conns {
		sc.conn.Close()
	}
	s.mu.Unlock()
}

func (s *testServer) forget(sc *srvConn) {
	s.mu.Lock()
	delete(s.conns, sc)
	s.mu.Unlock()
}

func (s *testServer) serve(sc *srvConn) {
	defer s.wg.Done()
	defer s.forget(sc)
	defer sc.conn.Close()
	in := buf.NewLinkBuffer()
	defer in.Reset()
	chunk := make([]byte, 64<<10)
	var proto transport.Protocol
	var h transport.Header
	for {
		n, err := sc.conn.Read(chunk)
		if n > 0 {
			in.Write(chunk[:n])
		}
		if err != nil {
			return
		}
		for in.Len() > 0 {
			if proto == 0 {
				p, err := transport.DetectReader(in)
				if errors.Is(err, buf.ErrNotEnough) {
					break
				}
				if err != nil {
					return
				}
				proto = p
			}
			name, typ, seq, body, err := transport.ReadMessage(in, proto, 64<<20, &h)
			if errors.Is(err, buf.ErrNotEnough) {
				break
			}
			if err != nil {
				return
			}
			s.requests.Add(1)
			if v, ok := h.IntInfo[transport.KeyRPCTimeout]; ok {
				s.lastTO.Store(v)
			}
			if len(h.StrInfo) > 0 {
				m := make(map[string]string, len(h.StrInfo))
				for k, v := range h.StrInfo {
					m[k] = v
				}
				s.lastMI.Store(m)
			}
			name = strings.Clone(name) // a view of in's memory
			args := new(echoArgs)
			_, aerr := args.FastRead(body)
			in.Release()
			if typ == thrift.ONEWAY {
				s.oneways.Add(1)
				continue
			}
			if name != "echo" || aerr != nil {
				ae := thrift.NewApplicationException(thrift.ExceptionUnknownMethod, "unknown method "+name)
				if aerr != nil {
					ae = thrift.NewApplicationException(thrift.ExceptionProtocolError, aerr.Error())
				}
				sc.reply(proto, name, thrift.EXCEPTION, seq, ae, nil)
				continue
			}
			if args.SleepMs > 0 {
				s.wg.Add(1)
				go func() {
					defer s.wg.Done()
					time.Sleep(time.Duration(args.SleepMs) * time.Millisecond)
					sc.answer(proto, seq, args)
				}()
				continue
			}
			if !sc.answer(proto, seq, args) {
				return
			}
		}
	}
}

// answer replies to one echo call as its Mode says; false ends the
// connection.
func (sc *srvConn) answer(proto transport.Protocol, seq int32, args *echoArgs) bool {
	res := &echoResult{}
	var h transport.Header
	switch args.Mode {
	case modeEcho:
		res.Success, res.HasSuccess = args.Msg, true
	case modeAppError:
		return sc.reply(proto, "echo", thrift.EXCEPTION, seq,
			thrift.NewApplicationException(thrift.ExceptionInternalError, "handler failed"), nil)
	case modeBiz:
		res.HasSuccess = true
		h.SetStr(transport.StrKeyBizStatus, "1001")
		h.SetStr(transport.StrKeyBizMessage, "no stock")
		h.SetStr(transport.StrKeyBizExtra, `{"sku":"42"}`)
	case modeDeclared:
		res.Err = &oops{Why: "declared"}
	case modeDrop:
		res.Success, res.HasSuccess = args.Msg, true
		h.SetStr(transport.StrKeyConnReset, "1")
	case modeReset:
		if tc, ok := sc.conn.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		sc.conn.Close()
		return false
	case modeClose:
		sc.conn.Close()
		return false
	case modeHuge:
		res.Success, res.HasSuccess = make([]byte, args.Size), true
	case modeWrongSeq:
		res.Success, res.HasSuccess = args.Msg, true
		return sc.reply(proto, "echo", thrift.REPLY, seq+1000, res, &h)
	case modeWrongName:
		res.Success, res.HasSuccess = args.Msg, true
		return sc.reply(proto, "other", thrift.REPLY, seq, res, &h)
	case modeCallType:
		res.Success, res.HasSuccess = args.Msg, true
		return sc.reply(proto, "echo", thrift.CALL, seq, res, &h)
	default:
		return sc.reply(proto, "echo", thrift.EXCEPTION, seq,
			thrift.NewApplicationException(thrift.ExceptionUnknown, "bad mode "+strconv.Itoa(int(args.Mode))), nil)
	}
	return sc.reply(proto, "echo", thrift.REPLY, seq, res, &h)
}

func (sc *srvConn) reply(proto transport.Protocol, name string, typ thrift.MessageType, seq int32, body thrift.FastCodec, h *transport.Header) bool {
	if h == nil {
		h = new(transport.Header)
	}
	out := buf.NewLinkBuffer()
	defer out.Reset()
	if err := transport.WriteMessage(out, proto, h, name, typ, seq, body); err != nil {
		return false
	}
	out.Flush()
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	_, err := sc.conn.Write(out.Bytes())
	return err == nil
}
