package transport

import (
	"strconv"

	"github.com/petrel-rpc/petrel/buf"
)

// Protocol is a framing of Thrift messages on a byte stream.
type Protocol uint8

// The protocols. The zero value is no protocol.
const (
	// Framed: a 4-byte big-endian length, then the message (Apache
	// TFramedTransport). See docs/spec/framed.md.
	Framed Protocol = iota + 1
	// Buffered: the bare message, with no length (Apache's default
	// unframed transport; Kitex calls it PurePayload). The message's end is
	// found by walking its bytes. Binary protocol only.
	Buffered
	// TTHeader: CloudWeGo's header transport, as Kitex speaks it: a length,
	// magic 0x1000, flags, sequence id and key-value headers before the
	// message. See docs/spec/ttheader.md.
	TTHeader
)

// String returns "framed", "buffered", "ttheader" or "Protocol(N)".
func (p Protocol) String() string {
	switch p {
	case Framed:
		return "framed"
	case Buffered:
		return "buffered"
	case TTHeader:
		return "ttheader"
	}
	return "Protocol(" + strconv.Itoa(int(p)) + ")"
}

// Payload protocols: how the Thrift message inside a frame is encoded
// (Header.PayloadProtocol; TTHeader's PROTOCOL ID byte).
const (
	PayloadBinary  uint8 = 0 // Thrift binary protocol (strict message header 0x8001)
	PayloadCompact uint8 = 2 // Thrift compact protocol (message header 0x82)
)

// DetectLen is the number of bytes Detect needs to decide in every case.
const DetectLen = 6

// Detect names the protocol of a connection from its first bytes:
//
//   - bytes 0-1 are 0x80 0x01 (a strict binary message header): Buffered;
//   - bytes 4-5 are 0x10 0x00 (TTHeader magic after the length): TTHeader;
//   - bytes 4-5 are 0x80 0x01, or byte 4 is 0x82 with compact version 1 in
//     byte 5 (a binary or compact message after a length): Framed.
//
// Apache's THeader (magic 0x0FFF) is recognised and refused with
// ErrUnsupported. With fewer bytes than it needs, Detect returns
// ErrNeedMore (plain, not wrapped); it never needs more than DetectLen.
// Anything else is ErrUnknownProtocol.
func Detect(peek []byte) (Protocol, error) {
	if len(peek) >= 1 && peek[0] == 0x80 {
		if len(peek) < 2 {
			return 0, ErrNeedMore
		}
		if peek[1] == 0x01 {
			return Buffered, nil
		}
		// No frame length starts with a set top bit: nothing else fits.
		return 0, unknownProtocol(peek)
	}
	if len(peek) >= 1 && peek[0] == 0x82 {
		// A compact message with no frame (or a frame of over 2 GiB):
		// Petrel frames only binary messages by walking them.
		return 0, protoErr(ErrUnsupported, "unframed compact protocol (first byte 0x82) is not supported; use Framed or TTHeader")
	}
	if len(peek) >= 1 && peek[0]&0x80 != 0 {
		return 0, unknownProtocol(peek)
	}
	if len(peek) < DetectLen {
		return 0, ErrNeedMore
	}
	switch {
	case peek[4] == 0x10 && peek[5] == 0x00:
		return TTHeader, nil
	case peek[4] == 0x80 && peek[5] == 0x01:
		return Framed, nil
	case peek[4] == 0x82 && peek[5]&0x1f == 0x01:
		return Framed, nil
	case peek[4] == 0x0f && peek[5] == 0xff:
		return 0, protoErr(ErrUnsupported, "Apache THeader (magic 0x0FFF) is not supported; use Kitex TTHeader (0x1000) or Framed")
	}
	return 0, unknownProtocol(peek)
}

func unknownProtocol(peek []byte) error {
	n := min(len(peek), DetectLen)
	return protoErr(ErrUnknownProtocol, "first bytes % x match no protocol (want Buffered 80 01, Framed/TTHeader length then 80 01 / 82 / 10 00)", peek[:n])
}

// DetectReader peeks at the first bytes of r and names its protocol (see
// Detect). It consumes nothing. On a blocking reader (a netpoll connection)
// it waits for DetectLen bytes, which every valid first message has; on a
// LinkBuffer holding fewer bytes it returns the buffer's error
// (buf.ErrNotEnough) unless the bytes present already decide.
func DetectReader(r buf.Reader) (Protocol, error) {
	if n := r.Len(); n > 0 && n < DetectLen {
		b, err := r.Peek(n)
		if err != nil {
			return 0, err
		}
		if p, err := Detect(b); err != ErrNeedMore {
			return p, err
		}
	}
	b, err := r.Peek(DetectLen)
	if err != nil {
		return 0, err
	}
	return Detect(b)
}
