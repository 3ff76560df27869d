package transport

import (
	"encoding/binary"
	"math"

	"github.com/petrel-rpc/petrel/buf"
)

// DefaultMaxFrameSize is the frame size limit ReadFrame and ReadMessage apply
// when given maxSize <= 0: 16 MiB.
const DefaultMaxFrameSize = 16 << 20

// maxWireFrame is the largest frame the 4-byte length fields can describe
// with their top bit clear (Framed and TTHeader require it clear).
const maxWireFrame = math.MaxInt32

// ReadFrame reads one whole frame of protocol p from r and returns its
// payload: the bytes of one Thrift message, as a view into r's memory that
// stays valid until r.Release. It resets h and fills it from the frame. (For
// TTHeader, the Framed length that Kitex's TTHeaderFramed puts before a
// binary message inside the payload is checked and left out.)
//
// maxSize bounds the bytes of the whole frame, length fields and header
// included (<= 0 means DefaultMaxFrameSize). The bound is checked from the
// length field, before the rest of the frame is read or any memory is
// reserved for it; for Buffered, which has no length, from the sizes the
// message declares as it is walked. TTHeader header sizes, counts and string
// lengths are checked against the header's own size.
//
// r may block (a netpoll connection's Reader waits in Peek and Next until
// bytes arrive) or not (a buf.LinkBuffer returns buf.ErrNotEnough). ReadFrame
// peeks at the frame's head and consumes the frame with one Next once its
// size is known, so an error from r leaves r where it was: a caller holding
// part of a frame in a LinkBuffer may call again when more bytes are there.
// It never asks a blocking reader for bytes beyond the current message.
//
// Errors of r are returned as they are; bad bytes give an *rpcerr.Error with
// code Protocol whose cause is ErrFrameTooLarge, ErrBadFrame, ErrBadMessage
// or ErrUnsupported.
func ReadFrame(r buf.Reader, p Protocol, maxSize int, h *Header) (payload []byte, err error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxFrameSize
	}
	if h == nil {
		h = new(Header)
	}
	h.Reset()
	h.Protocol = p
	switch p {
	case Framed:
		return readFramed(r, maxSize, h)
	case TTHeader:
		return readTTHeader(r, maxSize, h)
	case Buffered:
		return readBuffered(r, maxSize)
	}
	return nil, protoErr(ErrUnsupported, "ReadFrame: no such protocol %v", p)
}

// BeginFrame starts a frame of protocol p whose payload is exactly payloadLen
// bytes: it reserves the whole frame with one w.Malloc, writes the frame's
// header (for TTHeader from h: SeqID, Flags, PayloadProtocol, the info maps
// and the ACL token; h may be nil for Framed and Buffered) with the lengths
// already right, and returns the payload room, which the caller fills
// completely (with FastWrite; or with FastWriteNocopy and then trims the
// unused room with w.MallocAck, as WriteMessage does). Nothing is flushed.
func BeginFrame(w buf.Writer, p Protocol, h *Header, payloadLen int) (payload []byte, err error) {
	var seq int32
	if h != nil {
		seq = h.SeqID
	}
	return beginFrame(w, p, h, seq, payloadLen)
}

func beginFrame(w buf.Writer, p Protocol, h *Header, seq int32, payloadLen int) ([]byte, error) {
	if payloadLen < 0 {
		return nil, protoErr(ErrFrameTooLarge, "%v frame with a negative payload length %d", p, payloadLen)
	}
	switch p {
	case Framed:
		if payloadLen > maxWireFrame-4 {
			return nil, protoErr(ErrFrameTooLarge, "framed payload of %d bytes exceeds the 2 GiB the length field holds", payloadLen)
		}
		b, err := w.Malloc(4 + payloadLen)
		if err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(b, uint32(payloadLen))
		return b[4:], nil
	case Buffered:
		return w.Malloc(payloadLen)
	case TTHeader:
		return beginTTHeader(w, h, seq, payloadLen)
	}
	return nil, protoErr(ErrUnsupported, "BeginFrame: no such protocol %v", p)
}

// readFramed reads a 4-byte length and that many bytes.
func readFramed(r buf.Reader, maxSize int, h *Header) ([]byte, error) {
	head, err := r.Peek(4)
	if err != nil {
		return nil, err
	}
	n := uint64(binary.BigEndian.Uint32(head))
	if n > maxWireFrame {
		return nil, protoErr(ErrBadFrame, "framed: frame length 0x%08x is negative (top bit set)", n)
	}
	if n+4 > uint64(maxSize) {
		return nil, protoErr(ErrFrameTooLarge, "framed: frame of %d bytes declared, limit %d", n+4, maxSize)
	}
	if n == 0 {
		return nil, protoErr(ErrBadFrame, "framed: empty frame")
	}
	frame, err := r.Next(int(n) + 4)
	if err != nil {
		return nil, err
	}
	payload := frame[4:]
	if payload[0] == 0x82 {
		h.PayloadProtocol = PayloadCompact
	}
	return payload, nil
}
