package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// insertHeader returns the TTHeader frame f with b (a multiple of 4 bytes)
// inserted into its variable header at offset at (from byte 14), its
// LENGTH and HEADER SIZE adjusted.
func insertHeader(f []byte, at int, b ...byte) []byte {
	out := append([]byte(nil), f[:14+at]...)
	out = append(out, b...)
	out = append(out, f[14+at:]...)
	binary.BigEndian.PutUint32(out, binary.BigEndian.Uint32(out)+uint32(len(b)))
	binary.BigEndian.PutUint16(out[12:], binary.BigEndian.Uint16(out[12:])+uint16(len(b)/4))
	return out
}

// unknownInfo adds an info block of id 0x20 (none Petrel or Kitex knows)
// at the end of the frame's header.
func unknownInfo(f []byte) []byte {
	return insertHeader(f, int(binary.BigEndian.Uint16(f[12:]))*4, 0x20, 0, 0, 0)
}

// zlibTransform declares transform 1 (Apache's zlib) in the frame.
func zlibTransform(f []byte) []byte {
	out := insertHeader(f, 2, 0x01, 0, 0, 0)
	out[15] = 1 // NUM TRANSFORMS
	return out
}

// badStringInfo adds a string block whose key runs past the header.
func badStringInfo(f []byte) []byte {
	return insertHeader(f, int(binary.BigEndian.Uint16(f[12:]))*4, 0x01, 0x00, 0x01, 0x00, 0x09, 0, 0, 0)
}

// headerSize sets the frame's HEADER SIZE to n*4 bytes.
func headerSize(n uint16) func([]byte) []byte {
	return func(f []byte) []byte {
		out := append([]byte(nil), f...)
		binary.BigEndian.PutUint16(out[12:], n)
		return out
	}
}

// badHeaderCases are TTHeader requests whose header the server refuses
// after reading the frame's head: the exception's name, message and
// whether the connection goes on (the frame was consumed whole).
var badHeaderCases = []struct {
	name   string
	mutate func([]byte) []byte
	method string // the exception's message name: "" when the payload cannot be read
	text   string // in the exception's message
	keeps  bool
}{
	{"unknown-info-id", unknownInfo, "echo", "unknown info id 0x20", true},
	{"bad-string-info", badStringInfo, "echo", "INFO_KEYVALUE key of 9 bytes", true},
	{"zlib-transform", zlibTransform, "", "transform id 1", true},
	{"header-past-frame", headerSize(0x4000), "", "header of 65536 bytes does not fit in a frame", false},
	{"header-over-64k", headerSize(0x4001), "", "header of 65540 bytes exceeds the limit of 65536", false},
}

// TestBadTTHeaderAnswered: a TTHeader request whose header the server
// cannot take (an unknown info id, an info block cut short, a transform, a
// header size that does not fit) is answered with a PROTOCOL_ERROR
// exception saying what was wrong, under the request's sequence id and
// flags, in its payload protocol, without running the handler. When the
// frame was consumed whole (its LENGTH and magic were good), the connection
// goes on and serves the next request; otherwise crrst is set and the
// connection closes.
func TestBadTTHeaderAnswered(t *testing.T) {
	_, h, addr := startServer(t)
	for _, tc := range badHeaderCases {
		for _, payload := range []uint8{transport.PayloadBinary, transport.PayloadCompact} {
			t.Run(fmt.Sprintf("%s/payload%d", tc.name, payload), func(t *testing.T) {
				hdr := &transport.Header{Protocol: transport.TTHeader, PayloadProtocol: payload, Flags: transport.FlagSupportOutOfOrder}
				hdr.SetInt(transport.KeyFromService, "caller")
				bad := tc.mutate(wireRequest(t, transport.TTHeader, hdr, 77, "bad"))
				next := wireRequest(t, transport.TTHeader, hdr, 78, "next")
				before := h.calls.Load()
				raw, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer raw.Close()
				if _, err := raw.Write(bad); err != nil {
					t.Fatal(err)
				}
				raw.SetReadDeadline(time.Now().Add(5 * time.Second))
				rd := buf.NewLinkBuffer()
				defer rd.Reset()
				var rh transport.Header
				name, typ, seq, body := readReply(t, raw, rd, &rh)
				if typ != thrift.EXCEPTION || seq != 77 || name != tc.method {
					t.Fatalf("reply %q %v seq %d; want EXCEPTION seq 77 named %q", name, typ, seq, tc.method)
				}
				if rh.SeqID != 77 || rh.Flags != transport.FlagSupportOutOfOrder || rh.PayloadProtocol != payload {
					t.Errorf("frame seq %d flags %#x payload %d; want the request's 77, %#x, %d", rh.SeqID, rh.Flags, rh.PayloadProtocol, transport.FlagSupportOutOfOrder, payload)
				}
				if closes := rh.StrInfo[transport.StrKeyConnReset] != ""; closes == tc.keeps {
					t.Errorf("crrst set: %v; the connection is kept: %v", closes, tc.keeps)
				}
				ex := new(thrift.ApplicationException)
				if payload == transport.PayloadCompact {
					_, err = ex.FastReadCompact(body)
				} else {
					_, err = ex.FastRead(body)
				}
				if err != nil {
					t.Fatal(err)
				}
				rd.Release()
				t.Logf("exception: %q", ex.Message)
				if ex.Type != thrift.ExceptionProtocolError || !strings.HasPrefix(ex.Message, "server: ") || !strings.Contains(ex.Message, tc.text) {
					t.Errorf("exception %d %q; want PROTOCOL_ERROR (%d) saying %q", ex.Type, ex.Message, thrift.ExceptionProtocolError, tc.text)
				}
				if tc.keeps {
					if _, err := raw.Write(next); err != nil {
						t.Fatal(err)
					}
					name, typ, seq, _ := readReply(t, raw, rd, &rh)
					if typ != thrift.REPLY || seq != 78 || name != "echo" {
						t.Fatalf("the next request: %q %v seq %d; want its REPLY", name, typ, seq)
					}
					rd.Release()
				} else {
					rest, err := io.ReadAll(raw)
					if err != nil || len(rest)+rd.Len() != 0 {
						t.Fatalf("after the exception: %d more bytes, %v; want EOF", len(rest)+rd.Len(), err)
					}
				}
				if want := before + map[bool]int64{true: 1}[tc.keeps]; h.calls.Load() != want {
					t.Errorf("the handler ran %d times, want %d", h.calls.Load()-before, want-before)
				}
			})
		}
	}
}

// readReply reads one TTHeader message from raw into rd.
func readReply(t *testing.T, raw net.Conn, rd *buf.LinkBuffer, h *transport.Header) (string, thrift.MessageType, int32, []byte) {
	t.Helper()
	chunk := make([]byte, 4096)
	for {
		name, typ, seq, body, err := transport.ReadMessage(rd, transport.TTHeader, 0, h)
		if err == nil {
			return name, typ, seq, body
		}
		if !errors.Is(err, buf.ErrNotEnough) {
			t.Fatalf("reading a reply: %v", err)
		}
		n, err := raw.Read(chunk)
		if n > 0 {
			rd.WriteBinary(append([]byte(nil), chunk[:n]...))
			rd.Flush()
		}
		if err != nil {
			t.Fatalf("reading a reply: %v after %d bytes; want the server's exception", err, rd.Len())
		}
	}
}

// rewriteProxy forwards TCP connections to addr; the client's n-th TTHeader
// frame over all of them (counting from 1) is passed through mutate.
type rewriteProxy struct {
	ln     net.Listener
	n      int64
	mutate func([]byte) []byte
	frames atomic.Int64
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

func startRewriteProxy(t *testing.T, addr string, n int64, mutate func([]byte) []byte) *rewriteProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &rewriteProxy{ln: ln, n: n, mutate: mutate, conns: []net.Conn{}}
	p.wg.Add(1)
	go p.accept(addr)
	t.Cleanup(p.close)
	return p
}

func (p *rewriteProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *rewriteProxy) accept(addr string) {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", addr)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c) || !p.track(s) {
			c.Close()
			s.Close()
			return
		}
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			io.Copy(c, s)
			c.Close()
		}()
		go func() {
			defer p.wg.Done()
			defer s.Close()
			for {
				var l [4]byte
				if _, err := io.ReadFull(c, l[:]); err != nil {
					return
				}
				f := make([]byte, 4+binary.BigEndian.Uint32(l[:]))
				copy(f, l[:])
				if _, err := io.ReadFull(c, f[4:]); err != nil {
					return
				}
				if p.frames.Add(1) == p.n {
					f = p.mutate(f)
				}
				if _, err := s.Write(f); err != nil {
					return
				}
			}
		}()
	}
}

func (p *rewriteProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// TestBadTTHeaderClientError: a Petrel client (TTHeader, multiplexed)
// whose request reaches the server with a header it refuses gets the
// server's exception saying what was wrong, not a closed connection, and
// its next call is served.
func TestBadTTHeaderClientError(t *testing.T) {
	_, h, addr := startServer(t)
	for _, tc := range badHeaderCases {
		t.Run(tc.name, func(t *testing.T) {
			// The first frame is the warm-up call's; the second is changed.
			proxy := startRewriteProxy(t, addr, 2, tc.mutate)
			cli, err := echotest.NewEchoClient("Echo", client.WithTransport(transport.TTHeader), client.WithMuxConnection(1),
				client.WithHostPorts(proxy.ln.Addr().String()), client.WithRPCTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			if _, err := cli.Echo(context.Background(), &echotest.Request{Action: "echo", Msg: "warm"}); err != nil {
				t.Fatal(err)
			}
			before := h.calls.Load()
			_, err = cli.Echo(context.Background(), &echotest.Request{Action: "echo", Msg: "bad"})
			var ae *thrift.ApplicationException
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v; want the server's application exception", err)
			}
			if ae.Type != thrift.ExceptionProtocolError || !strings.Contains(ae.Message, tc.text) {
				t.Fatalf("exception %d %q; want PROTOCOL_ERROR saying %q", ae.Type, ae.Message, tc.text)
			}
			if h.calls.Load() != before {
				t.Error("the handler ran for the refused request")
			}
			if res, err := cli.Echo(context.Background(), &echotest.Request{Action: "echo", Msg: "next"}); err != nil || res.GetMsg() != "next" {
				t.Fatalf("the call after: %v, %v", res, err)
			}
		})
	}
}
