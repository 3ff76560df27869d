package interop_test

// Byte-exact wire checks against the public specifications, with frames
// built by hand here (never by Petrel's encoders): CloudWeGo's TTHeader
// as Kitex and cloudwego/gopkg write it (docs/spec/ttheader.md), Apache's
// framed and unframed transports and strict binary message header
// (docs/spec/framed.md, thrift-binary.md) and TApplicationException. The
// RPC tests send such frames to Petrel's server over a raw TCP connection
// and compare its reply with the bytes the specification gives.

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	athrift "github.com/apache/thrift/lib/go/thrift"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/transport"
)

// cat joins byte pieces, so that a frame can be written one field a line.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// str16 is a TTHeader string: a big-endian uint16 length, then the bytes.
func str16(s string) []byte { return cat([]byte{byte(len(s) >> 8), byte(len(s))}, []byte(s)) }

// addCall is the strict binary CALL of add(a=2, b=3) with sequence id 7:
// version word 0x80010001, name "add", seq, then the arguments struct
// {1: i32 2, 2: i64 3} and STOP (34 bytes).
var addCall = cat(
	[]byte{0x80, 0x01, 0x00, 0x01},    // version 1, type CALL
	[]byte{0, 0, 0, 3}, []byte("add"), // name
	[]byte{0, 0, 0, 7},                               // seq id
	[]byte{0x08, 0x00, 0x01, 0, 0, 0, 2},             // field 1 i32 = 2
	[]byte{0x0a, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 3}, // field 2 i64 = 3
	[]byte{0x00}, // STOP
)

// addReply is the strict binary REPLY to addCall: the result struct
// {0: i64 5} (27 bytes).
var addReply = cat(
	[]byte{0x80, 0x01, 0x00, 0x02}, // version 1, type REPLY
	[]byte{0, 0, 0, 3}, []byte("add"),
	[]byte{0, 0, 0, 7},
	[]byte{0x0a, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 5}, // field 0 (success) i64 = 5
	[]byte{0x00},
)

// kitexAddRequest is addCall in a TTHeader frame as a Kitex client writes
// it with cloudwego/gopkg's encoder: the ACL token block first, then the
// string block ("isn"), then the integer block (FromService 3, ToService
// 6, ToMethod 9, RPCTimeout 12 in milliseconds, MsgType 22), zero padding
// to a multiple of 4, and HEADER SIZE in 4-byte words. With framed, the
// payload carries a Framed length first (Kitex's TTHeaderFramed).
func kitexAddRequest(framed bool) []byte {
	info := cat(
		[]byte{0x00, 0x00},        // PROTOCOL ID binary, NUM TRANSFORMS 0
		[]byte{0x11}, str16("tk"), // INFO_ACL_TOKEN
		[]byte{0x01, 0x00, 0x01}, str16("isn"), str16("InteropService"), // INFO_KEYVALUE, 1 entry
		[]byte{0x10, 0x00, 0x05}, // INFO_INTKEYVALUE, 5 entries
		[]byte{0x00, 0x03}, str16("kx-caller"),
		[]byte{0x00, 0x06}, str16("InteropService"),
		[]byte{0x00, 0x09}, str16("add"),
		[]byte{0x00, 0x0c}, str16("1500"),
		[]byte{0x00, 0x16}, str16("1"),
	)
	// 85 bytes: 3 of padding make 88, 22 words.
	if len(info) != 85 {
		panic("kitexAddRequest: header info changed size")
	}
	info = cat(info, []byte{0, 0, 0})
	payload := addCall
	if framed {
		payload = cat([]byte{0, 0, 0, byte(len(addCall))}, addCall)
	}
	return cat(
		[]byte{0, 0, 0, byte(10 + len(info) + len(payload))}, // LENGTH
		[]byte{0x10, 0x00}, // HEADER MAGIC
		[]byte{0x00, 0x00}, // FLAGS: 0, as Kitex sends a request
		[]byte{0, 0, 0, 7}, // SEQUENCE NUMBER = the message's seq id
		[]byte{0x00, 22},   // HEADER SIZE: 88 / 4
		info,
		payload,
	)
}

// seenCall is what the Add handler of kitexHandler saw of its last call.
type seenCall struct {
	caller, callee, method, protocol string
	timeout                          time.Duration
	deadline                         bool
}

// kitexHandler is the interop handler with an Add that records rpcinfo.
type kitexHandler struct {
	*petrelHandler
	mu   sync.Mutex
	seen seenCall // guarded by mu
}

func (h *kitexHandler) Add(ctx context.Context, a int32, b int64) (int64, error) {
	var s seenCall
	if ri := rpcinfo.FromContext(ctx); ri != nil {
		s = seenCall{caller: ri.Caller, callee: ri.Callee, method: ri.Method, protocol: ri.Protocol, timeout: ri.Timeout}
	}
	_, s.deadline = ctx.Deadline()
	h.mu.Lock()
	h.seen = s
	h.mu.Unlock()
	return h.petrelHandler.Add(ctx, a, b)
}

func (h *kitexHandler) last() seenCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen
}

// rawExchange sends req on a new connection to addr and returns the first
// frame that comes back, read as a 4-byte length and that many bytes.
func rawExchange(t *testing.T, addr string, req []byte) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, callTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(callTimeout)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(req); err != nil {
		t.Fatalf("writing the request: %v", err)
	}
	head := make([]byte, 4)
	if _, err := io.ReadFull(conn, head); err != nil {
		t.Fatalf("reading the reply's length: %v", err)
	}
	n := binary.BigEndian.Uint32(head)
	if n > 1<<20 {
		t.Fatalf("reply declares %d bytes", n)
	}
	rest := make([]byte, n)
	if _, err := io.ReadFull(conn, rest); err != nil {
		t.Fatalf("reading the reply's %d bytes: %v", n, err)
	}
	return cat(head, rest)
}

// ttReply is a TTHeader reply frame with seq 7, flags 0, no info blocks
// (header: protocol id, transform count and 2 bytes of padding, 1 word)
// and payload msg.
func ttReply(msg []byte) []byte {
	return cat(
		[]byte{0, 0, 0, byte(10 + 4 + len(msg))},
		[]byte{0x10, 0x00, 0x00, 0x00},
		[]byte{0, 0, 0, 7},
		[]byte{0x00, 0x01},
		[]byte{0x00, 0x00, 0x00, 0x00},
		msg,
	)
}

// TestKitexTTHeaderRequestBytes sends Petrel's server the bytes of a Kitex
// client's TTHeader call, bare and TTHeaderFramed, and checks the reply
// byte for byte, and that the handler saw the caller (int key 3), the
// method and the timeout (int key 12, milliseconds).
func TestKitexTTHeaderRequestBytes(t *testing.T) {
	h := &kitexHandler{petrelHandler: newPetrelHandler()}
	addr := startPetrel(t, h)
	want := ttReply(addReply)
	for _, framed := range []bool{false, true} {
		name := map[bool]string{false: "ttheader", true: "ttheader-framed"}[framed]
		t.Run(name, func(t *testing.T) {
			got := rawExchange(t, addr, kitexAddRequest(framed))
			if !bytes.Equal(got, want) {
				t.Fatalf("reply differs at byte %d\ngot  % x\nwant % x", firstDiff(got, want), got, want)
			}
			s := h.last()
			wantSeen := seenCall{caller: "kx-caller", callee: "InteropService", method: "add", protocol: "ttheader",
				timeout: 1500 * time.Millisecond, deadline: true}
			if s != wantSeen {
				t.Errorf("the handler saw %+v, want %+v", s, wantSeen)
			}
		})
	}
}

// appException is the binary body of a TApplicationException: field 1 the
// message, field 2 the type, STOP.
func appException(typ int32, msg string) []byte {
	return cat(
		[]byte{0x0b, 0x00, 0x01}, binary.BigEndian.AppendUint32(nil, uint32(len(msg))), []byte(msg),
		[]byte{0x08, 0x00, 0x02}, binary.BigEndian.AppendUint32(nil, uint32(typ)),
		[]byte{0x00},
	)
}

// TestUnknownMethodBytes: a call of a method the service lacks is answered,
// in the transport it came in, with an EXCEPTION message (type 3) of the
// same name and seq whose body is TApplicationException UNKNOWN_METHOD (1).
func TestUnknownMethodBytes(t *testing.T) {
	addr := startPetrel(t, newPetrelHandler())
	call := cat(
		[]byte{0x80, 0x01, 0x00, 0x01},
		[]byte{0, 0, 0, 6}, []byte("nosuch"),
		[]byte{0, 0, 0, 7},
		[]byte{0x00}, // empty arguments
	)
	exc := cat(
		[]byte{0x80, 0x01, 0x00, 0x03}, // version 1, type EXCEPTION
		[]byte{0, 0, 0, 6}, []byte("nosuch"),
		[]byte{0, 0, 0, 7},
		appException(1, `server: unknown method "nosuch"`),
	)
	framedLen := func(b []byte) []byte { return binary.BigEndian.AppendUint32(nil, uint32(len(b))) }
	for _, tc := range []struct {
		name      string
		req, want []byte
	}{
		{"framed", cat(framedLen(call), call), cat(framedLen(exc), exc)},
		{"ttheader", cat(
			[]byte{0, 0, 0, byte(10 + 4 + len(call))},
			[]byte{0x10, 0x00, 0x00, 0x00, 0, 0, 0, 7, 0x00, 0x01},
			[]byte{0x00, 0x00, 0x00, 0x00}, // binary, no transforms, padding
			call,
		), ttReply(exc)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rawExchange(t, addr, tc.req)
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("reply differs at byte %d\ngot  % x\nwant % x", firstDiff(got, tc.want), got, tc.want)
			}
		})
	}
}

// TestEncodeBytes pins what Petrel's transport writes for addCall in each
// protocol against the hand-built frames.
func TestEncodeBytes(t *testing.T) {
	args := &pe.InteropServiceAddArgs{A: 2, B: 3}
	tth := &transport.Header{ACLToken: "tk"}
	tth.SetStr("isn", "InteropService")
	tth.SetInt(transport.KeyToMethod, "add")
	// Petrel writes the string block, the integer block, then the ACL token.
	ttInfo := cat(
		[]byte{0x00, 0x00},
		[]byte{0x01, 0x00, 0x01}, str16("isn"), str16("InteropService"),
		[]byte{0x10, 0x00, 0x01}, []byte{0x00, 0x09}, str16("add"),
		[]byte{0x11}, str16("tk"),
		[]byte{0x00, 0x00, 0x00}, // 41 bytes, padded to 44
	)
	for _, tc := range []struct {
		name string
		p    transport.Protocol
		h    *transport.Header
		want []byte
	}{
		{"buffered", transport.Buffered, nil, addCall},
		{"framed", transport.Framed, nil, cat([]byte{0, 0, 0, byte(len(addCall))}, addCall)},
		{"ttheader", transport.TTHeader, tth, cat(
			[]byte{0, 0, 0, byte(10 + len(ttInfo) + len(addCall))},
			[]byte{0x10, 0x00, 0x00, 0x00, 0, 0, 0, 7},
			[]byte{0x00, byte(len(ttInfo) / 4)},
			ttInfo, addCall)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lb := buf.NewLinkBuffer()
			defer lb.Reset()
			if err := transport.WriteMessage(lb, tc.p, tc.h, "add", thrift.CALL, 7, args); err != nil {
				t.Fatal(err)
			}
			if err := lb.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := lb.Bytes(); !bytes.Equal(got, tc.want) {
				t.Fatalf("differs at byte %d\ngot  % x\nwant % x", firstDiff(got, tc.want), got, tc.want)
			}
		})
	}
}

// TestApplicationExceptionBytes: Petrel's TApplicationException encodes
// exactly as Apache's, in both protocols, for every type Apache defines,
// and each reads the other's.
func TestApplicationExceptionBytes(t *testing.T) {
	ctx := context.Background()
	for typ := int32(0); typ <= 10; typ++ {
		msg := "boom"
		pae := thrift.NewApplicationException(typ, msg)
		aae := athrift.NewTApplicationException(typ, msg)
		for _, p := range protocols {
			mb := athrift.NewTMemoryBuffer()
			proto := p.apache(mb)
			if err := aae.Write(ctx, proto); err != nil {
				t.Fatal(err)
			}
			if err := proto.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			apache := mb.Bytes()
			var petrel []byte
			var back thrift.ApplicationException
			var err error
			if p.name == "binary" {
				petrel = make([]byte, pae.BLength())
				petrel = petrel[:pae.FastWrite(petrel)]
				_, err = back.FastRead(apache)
				if want := appException(typ, msg); !bytes.Equal(petrel, want) {
					t.Errorf("binary type %d: petrel % x, spec % x", typ, petrel, want)
				}
			} else {
				petrel = make([]byte, pae.BLengthCompact())
				petrel = petrel[:pae.FastWriteCompact(petrel)]
				_, err = back.FastReadCompact(apache)
			}
			if !bytes.Equal(petrel, apache) {
				t.Errorf("%s type %d: petrel % x, apache % x", p.name, typ, petrel, apache)
			}
			if err != nil || back.Type != typ || back.Message != msg {
				t.Errorf("%s type %d: petrel read apache's bytes as %+v, %v", p.name, typ, back, err)
			}
		}
	}
}

// ttRequest is what a test peer read of one TTHeader frame, parsed by hand
// as a Kitex server parses it.
type ttRequest struct {
	flags   uint16
	seq     uint32
	words   int // HEADER SIZE
	proto   byte
	ints    map[uint16]string
	strs    map[string]string
	payload []byte
}

// parseTTHeader parses frame (LENGTH included) by the rules of the
// CloudWeGo specification; it reports what does not follow them.
func parseTTHeader(frame []byte) (*ttRequest, string) {
	if len(frame) < 14 || binary.BigEndian.Uint32(frame) != uint32(len(frame)-4) {
		return nil, "LENGTH does not count the bytes after it"
	}
	if frame[4] != 0x10 || frame[5] != 0x00 {
		return nil, "HEADER MAGIC is not 0x1000"
	}
	r := &ttRequest{
		flags: binary.BigEndian.Uint16(frame[6:]),
		seq:   binary.BigEndian.Uint32(frame[8:]),
		words: int(binary.BigEndian.Uint16(frame[12:])),
		ints:  map[uint16]string{},
		strs:  map[string]string{},
	}
	size := 4 * r.words
	if size < 2 || 14+size > len(frame) {
		return nil, "HEADER SIZE does not fit"
	}
	hb := frame[14 : 14+size]
	r.payload = frame[14+size:]
	r.proto = hb[0]
	if hb[1] != 0 {
		return nil, "transforms declared"
	}
	pos := 2
	u16 := func() (uint16, bool) {
		if pos+2 > len(hb) {
			return 0, false
		}
		v := binary.BigEndian.Uint16(hb[pos:])
		pos += 2
		return v, true
	}
	str := func() (string, bool) {
		n, ok := u16()
		if !ok || pos+int(n) > len(hb) {
			return "", false
		}
		s := string(hb[pos : pos+int(n)])
		pos += int(n)
		return s, true
	}
	for pos < len(hb) {
		id := hb[pos]
		pos++
		switch id {
		case 0x00:
		case 0x01, 0x10:
			n, ok := u16()
			if !ok {
				return nil, "info block count cut short"
			}
			for range n {
				if id == 0x01 {
					k, ok1 := str()
					v, ok2 := str()
					if !ok1 || !ok2 {
						return nil, "INFO_KEYVALUE entry cut short"
					}
					r.strs[k] = v
				} else {
					k, ok1 := u16()
					v, ok2 := str()
					if !ok1 || !ok2 {
						return nil, "INFO_INTKEYVALUE entry cut short"
					}
					r.ints[k] = v
				}
			}
		case 0x11:
			if _, ok := str(); !ok {
				return nil, "INFO_ACL_TOKEN cut short"
			}
		default:
			return nil, "unknown info id"
		}
	}
	return r, ""
}

// TestPetrelClientTTHeaderBytes: what Petrel's client sends over TTHeader
// is a frame a Kitex server reads (parsed here by the specification's
// rules), with the integer keys Kitex servers use: ToService (6), ToMethod
// (9), FromService (3) and RPCTimeout (12) in decimal milliseconds; and
// the client reads a reply laid out as Kitex's server writes it (MsgType
// 22 in the integer block, gopkg's padding).
func TestPetrelClientTTHeaderBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type seen struct {
		req *ttRequest
		bad string
	}
	got := make(chan seen, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- seen{bad: "accept: " + err.Error()}
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(callTimeout))
		head := make([]byte, 4)
		if _, err := io.ReadFull(conn, head); err != nil {
			got <- seen{bad: "reading the length: " + err.Error()}
			return
		}
		n := binary.BigEndian.Uint32(head)
		if n > 1<<16 {
			got <- seen{bad: "LENGTH too large"}
			return
		}
		frame := make([]byte, 4+n)
		copy(frame, head)
		if _, err := io.ReadFull(conn, frame[4:]); err != nil {
			got <- seen{bad: "reading the frame: " + err.Error()}
			return
		}
		req, bad := parseTTHeader(frame)
		got <- seen{req, bad}
		if req == nil {
			return
		}
		// Reply as a Kitex server: integer block {22: "2"}, padded.
		seq := binary.BigEndian.AppendUint32(nil, req.seq)
		reply := cat(
			[]byte{0x80, 0x01, 0x00, 0x02}, []byte{0, 0, 0, 3}, []byte("add"), seq,
			[]byte{0x0a, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 5}, []byte{0x00},
		)
		info := cat(
			[]byte{0x00, 0x00},                               // binary, no transforms
			[]byte{0x10, 0x00, 0x01, 0x00, 0x16}, str16("2"), // INFO_INTKEYVALUE {22: "2"}
			[]byte{0x00, 0x00}, // 10 bytes, padded to 12
		)
		_, _ = conn.Write(cat(
			binary.BigEndian.AppendUint32(nil, uint32(10+len(info)+len(reply))),
			[]byte{0x10, 0x00, 0x00, 0x00}, seq, []byte{0x00, byte(len(info) / 4)},
			info, reply,
		))
	}()

	c, err := pe.NewInteropServiceClient("kx.dest", client.WithHostPorts(ln.Addr().String()),
		client.WithTransport(transport.TTHeader), client.WithCallerName("px.caller"),
		client.WithRPCTimeout(callTimeout), client.WithShortConnection())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sum, callErr := c.Add(context.Background(), 2, 3)
	ln.Close() // the peer reports an Accept error if the client never came
	s := <-got
	if s.bad != "" {
		t.Fatalf("the request frame: %s", s.bad)
	}
	r := s.req
	if r.flags != 0 || r.proto != 0 {
		t.Errorf("FLAGS %#x, PROTOCOL ID %d; want 0 and 0 (binary)", r.flags, r.proto)
	}
	wantPayload := cat([]byte{0x80, 0x01, 0x00, 0x01}, []byte{0, 0, 0, 3}, []byte("add"),
		binary.BigEndian.AppendUint32(nil, r.seq),
		[]byte{0x08, 0x00, 0x01, 0, 0, 0, 2}, []byte{0x0a, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 3}, []byte{0x00})
	if !bytes.Equal(r.payload, wantPayload) {
		t.Errorf("payload (SEQUENCE NUMBER %d)\ngot  % x\nwant % x", r.seq, r.payload, wantPayload)
	}
	for k, want := range map[uint16]string{6: "kx.dest", 9: "add", 3: "px.caller"} {
		if r.ints[k] != want {
			t.Errorf("integer key %d = %q, want %q (all: %v)", k, r.ints[k], want, r.ints)
		}
	}
	ms, err := strconv.Atoi(r.ints[12])
	if err != nil || ms <= 0 || time.Duration(ms)*time.Millisecond > callTimeout {
		t.Errorf("RPCTimeout (12) = %q, want decimal milliseconds in (0, %d]", r.ints[12], callTimeout.Milliseconds())
	}
	if callErr != nil || sum != 5 {
		t.Errorf("Add over a Kitex-style reply = %d, %v; want 5", sum, callErr)
	}
}
