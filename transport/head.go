package transport

import (
	"encoding/binary"
	"math"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// ReadMessageHead decodes the head of a Framed or TTHeader frame from b,
// the frame's first bytes, which need not hold the whole frame: the size
// the frame's length declares (the length field included), the frame's
// header into h (reset first, filled as ReadFrame fills it) and the Thrift
// message's name, type and sequence id. It applies no size limit: it lets
// a server answer a request whose frame it refuses from its length
// (ErrFrameTooLarge) without reading the rest. name is a view of b.
//
// When b ends before the message header does (or, within the frame, before
// a malformed message header could be told from a cut one), the error is
// ErrNeedMore, plain. Bad bytes give a Protocol error as ReadFrame's do.
// Buffered declares no size: its size is 0, and the message header is read
// from b's start.
func ReadMessageHead(b []byte, p Protocol, h *Header) (size uint64, name string, typ thrift.MessageType, seq int32, err error) {
	if h == nil {
		h = new(Header)
	}
	h.Reset()
	h.Protocol = p
	var payload []byte
	switch p {
	case Framed:
		if len(b) < 4 {
			return 0, "", 0, 0, ErrNeedMore
		}
		l := binary.BigEndian.Uint32(b)
		switch {
		case l > maxWireFrame:
			return 0, "", 0, 0, protoErr(ErrBadFrame, "framed: frame length 0x%08x is negative (top bit set)", l)
		case l == 0:
			return 0, "", 0, 0, protoErr(ErrBadFrame, "framed: empty frame")
		}
		size = uint64(l) + 4
		payload = b[4:min(uint64(len(b)), size)]
		if len(payload) > 0 && payload[0] == 0x82 {
			h.PayloadProtocol = PayloadCompact
		}
	case TTHeader:
		if len(b) < ttFixed {
			return 0, "", 0, 0, ErrNeedMore
		}
		n, hs, err := checkTTHead(b[:ttFixed], math.MaxInt)
		if err != nil {
			return 0, "", 0, 0, err
		}
		if len(b) < ttFixed+hs {
			return 0, "", 0, 0, ErrNeedMore
		}
		size = uint64(n)
		h.Flags = binary.BigEndian.Uint16(b[6:])
		h.SeqID = int32(binary.BigEndian.Uint32(b[8:]))
		if err := h.decodeInfo(b[ttFixed : ttFixed+hs]); err != nil {
			return 0, "", 0, 0, err
		}
		payload = b[ttFixed+hs : min(len(b), n)]
		if h.PayloadProtocol == PayloadBinary {
			// A TTHeaderFramed payload (see unframePayload) is told from a
			// bare message by its bytes 4-5.
			if len(payload) < 8 && uint64(len(b)) < size {
				return 0, "", 0, 0, ErrNeedMore
			}
			if isFramedPayload(payload) {
				payload = payload[4:]
			}
		}
	case Buffered:
		if len(b) >= 4 {
			if err := checkBufferedVersion(binary.BigEndian.Uint32(b)); err != nil {
				return 0, "", 0, 0, err
			}
		}
		payload = b
	default:
		return 0, "", 0, 0, protoErr(ErrUnsupported, "ReadMessageHead: protocol %v has no message head", p)
	}
	name, typ, seq, _, err = readMessageBegin(payload, h.PayloadProtocol)
	if err != nil {
		if p == Buffered && bufferedHeadCut(b) ||
			uint64(len(b)) < size && (h.PayloadProtocol == PayloadBinary || h.PayloadProtocol == PayloadCompact) {
			return 0, "", 0, 0, ErrNeedMore
		}
		return 0, "", 0, 0, err
	}
	if p != TTHeader {
		h.SeqID = seq
	}
	return size, name, typ, seq, nil
}

// bufferedHeadCut reports whether b, the start of a Buffered message (a
// strict binary header), ends before its message header does.
func bufferedHeadCut(b []byte) bool {
	return len(b) < 8 || uint64(len(b)) < 8+uint64(binary.BigEndian.Uint32(b[4:]))+4
}
