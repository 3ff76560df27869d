package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// oversizedText is the message of the exception answering a request of
// size bytes over the limit, over p.
func oversizedText(p transport.Protocol, size, limit int) string {
	if p == transport.Buffered { // no length: its size is not known
		return fmt.Sprintf("server: request of more than %d bytes exceeds the limit (server.WithMaxMessageSize)", limit)
	}
	return fmt.Sprintf("server: request of %d bytes exceeds the limit of %d (server.WithMaxMessageSize)", size, limit)
}

// TestOversizedRequestAnswered: a request whose frame declares more than
// WithMaxMessageSize is answered, from its head alone (the body is never
// sent here), with a PROTOCOL_ERROR exception naming its size, the limit
// and the option, after the reply to the request before it; then the
// connection is closed (EOF) without its handler running. So is a Buffered
// one, which declares no size, once the server has read past the limit
// into it.
func TestOversizedRequestAnswered(t *testing.T) {
	const limit = 4096
	_, h, addr := startServer(t, server.WithMaxMessageSize(limit))
	for _, p := range []transport.Protocol{transport.Framed, transport.TTHeader, transport.Buffered} {
		for _, payload := range []uint8{transport.PayloadBinary, transport.PayloadCompact} {
			if p == transport.Buffered && payload != transport.PayloadBinary {
				continue // Buffered is binary only
			}
			t.Run(fmt.Sprintf("%v/payload%d", p, payload), func(t *testing.T) {
				hdr := &transport.Header{Protocol: p, PayloadProtocol: payload}
				if p == transport.TTHeader {
					hdr.Flags = transport.FlagSupportOutOfOrder
					hdr.SetInt(transport.KeyFromService, "caller")
				}
				small := wireRequest(t, p, hdr, 1, "small")
				big := wireRequest(t, p, hdr, 77, strings.Repeat("x", 2*limit))
				before := h.calls.Load()
				raw, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer raw.Close()
				// The small request and the oversized one's first 300 bytes:
				// its head, no more of its body (Buffered: all of it).
				sent := big[:300]
				if p == transport.Buffered {
					sent = big
				}
				if _, err := raw.Write(append(small, sent...)); err != nil {
					t.Fatal(err)
				}
				raw.SetReadDeadline(time.Now().Add(5 * time.Second))
				got, err := io.ReadAll(raw)
				if err != nil && !(p == transport.Buffered && errors.Is(err, syscall.ECONNRESET)) {
					// (The server closes a Buffered connection with the
					// rest of the request unread, which resets it.)
					t.Fatalf("reading the replies: %v after %d bytes (want them, then EOF)", err, len(got))
				}
				in := buf.NewLinkBufferFrom(got)
				var rh transport.Header
				// Framed replies come in order; TTHeader ones as the calls
				// end, so the exception may come first.
				name, typ, seq, body, err := transport.ReadMessage(in, p, 0, &rh)
				if p == transport.TTHeader && err == nil && seq == 77 {
					body = append([]byte(nil), body...)
					rh2 := rh
					in.Release()
					n2, typ2, seq2, _, err2 := transport.ReadMessage(in, p, 0, &transport.Header{})
					if err2 != nil || typ2 != thrift.REPLY || seq2 != 1 || n2 != "echo" {
						t.Fatalf("after the exception: %q %v seq %d, %v; want the small request's REPLY", n2, typ2, seq2, err2)
					}
					rh = rh2
				} else {
					if err != nil || typ != thrift.REPLY || seq != 1 || name != "echo" {
						t.Fatalf("first reply: %q %v seq %d, %v; want the small request's REPLY", name, typ, seq, err)
					}
					in.Release()
					name, typ, seq, body, err = transport.ReadMessage(in, p, 0, &rh)
					if err != nil {
						t.Fatalf("after the first reply: %v (%d bytes left); want the exception answering the oversized request", err, in.Len())
					}
				}
				if typ != thrift.EXCEPTION || seq != 77 || name != "echo" {
					t.Fatalf("second reply: %q %v seq %d; want EXCEPTION seq 77 named echo", name, typ, seq)
				}
				if rh.PayloadProtocol != payload {
					t.Errorf("the exception is in payload protocol %d, the request was in %d", rh.PayloadProtocol, payload)
				}
				if p == transport.TTHeader && (rh.SeqID != 77 || rh.Flags != transport.FlagSupportOutOfOrder || rh.StrInfo[transport.StrKeyConnReset] == "") {
					t.Errorf("TTHeader frame seq %d flags %#x info %v; want the request's 77 and %#x, and crrst (the connection closes)",
						rh.SeqID, rh.Flags, rh.StrInfo, transport.FlagSupportOutOfOrder)
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
				if want := oversizedText(p, len(big), limit); ex.Type != thrift.ExceptionProtocolError || ex.Message != want {
					t.Errorf("exception %d %q; want %d %q", ex.Type, ex.Message, thrift.ExceptionProtocolError, want)
				}
				in.Release()
				if in.Len() != 0 {
					t.Errorf("%d bytes after the exception", in.Len())
				}
				if n := h.calls.Load() - before; n != 1 {
					t.Errorf("the handler ran %d times, want 1 (the small request only)", n)
				}
			})
		}
	}
}

// TestOversizedRequestUnreadable: an oversized frame whose message header
// has not arrived (a length and 4 bytes), or whose header is bad, closes
// the connection as before, without an answer and without waiting.
func TestOversizedRequestUnreadable(t *testing.T) {
	const limit = 4096
	_, _, addr := startServer(t, server.WithMaxMessageSize(limit))
	framedNoName := []byte{0, 1, 0, 0, 0x80, 0x01, 0x00, 0x01}
	badVersion := []byte{0, 1, 0, 0, 0x80, 0x07, 0x00, 0x01, 0, 0, 0, 4, 'e', 'c', 'h', 'o', 0, 0, 0, 9}
	ttNoHeader := []byte{0, 1, 0, 0, 0x10, 0x00, 0, 0, 0, 0, 0, 9, 0x00, 0x10}
	for i, b := range [][]byte{framedNoName, badVersion, ttNoHeader} {
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		raw.Write(b)
		raw.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(raw)
		raw.Close()
		if err != nil || len(got) != 0 {
			t.Errorf("case %d: read %d bytes, %v; want EOF at once", i, len(got), err)
		}
	}
}

// wireRequest returns an echo request as it goes on the wire.
func wireRequest(t *testing.T, p transport.Protocol, h *transport.Header, seq int32, msg string) []byte {
	t.Helper()
	lb := buf.NewLinkBuffer()
	args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: msg}}
	if err := transport.WriteMessage(lb, p, h, "echo", thrift.CALL, seq, args); err != nil {
		t.Fatal(err)
	}
	lb.Flush()
	return append([]byte(nil), lb.Bytes()...)
}

var oversizedRE = regexp.MustCompile(`^server: request of (\d+) bytes exceeds the limit of 4096 \(server\.WithMaxMessageSize\)$`)

// TestOversizedRequestClientError: a Petrel client (Framed and Buffered on
// the long pool, TTHeader on the multiplexed one) whose request is over the server's
// limit gets the server's exception saying so, not a closed connection, and
// its next call is served.
func TestOversizedRequestClientError(t *testing.T) {
	const limit = 4096
	_, h, addr := startServer(t, server.WithMaxMessageSize(limit))
	modes := []struct {
		name string
		opts []client.Option
	}{
		{"framed-long", []client.Option{client.WithTransport(transport.Framed), client.WithLongConnection(client.LongPoolConfig{})}},
		{"ttheader-mux", []client.Option{client.WithTransport(transport.TTHeader), client.WithMuxConnection(1)}},
		{"buffered-long", []client.Option{client.WithTransport(transport.Buffered), client.WithLongConnection(client.LongPoolConfig{})}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			cli, err := echotest.NewEchoClient("Echo", append(m.opts, client.WithHostPorts(addr), client.WithRPCTimeout(5*time.Second))...)
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			before := h.calls.Load()
			_, err = cli.Echo(context.Background(), &echotest.Request{Action: "echo", Msg: strings.Repeat("y", 2*limit)})
			var ae *thrift.ApplicationException
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v; want the server's application exception", err)
			}
			if m.name == "buffered-long" {
				if want := oversizedText(transport.Buffered, 0, limit); ae.Type != thrift.ExceptionProtocolError || ae.Message != want {
					t.Fatalf("exception %d %q; want PROTOCOL_ERROR %q", ae.Type, ae.Message, want)
				}
			} else {
				sm := oversizedRE.FindStringSubmatch(ae.Message)
				if ae.Type != thrift.ExceptionProtocolError || sm == nil {
					t.Fatalf("exception %d %q; want PROTOCOL_ERROR matching %s", ae.Type, ae.Message, oversizedRE)
				}
				if n, _ := strconv.Atoi(sm[1]); n <= limit || n > 3*limit {
					t.Errorf("the exception names a request of %d bytes; the request was about %d", n, 2*limit)
				}
			}
			if !strings.Contains(err.Error(), ae.Message) {
				t.Errorf("the error %q does not say the server's message", err)
			}
			if h.calls.Load() != before {
				t.Error("the handler ran for the oversized request")
			}
			if res, err := cli.Echo(context.Background(), &echotest.Request{Action: "echo", Msg: "next"}); err != nil || res.GetMsg() != "next" {
				t.Fatalf("the call after: %v, %v", res, err)
			}
		})
	}
}
