package transport

import (
	"encoding/binary"
	"errors"
	"strings"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// RefusedFrame describes a TTHeader frame that ReadFrame, ReadMessage or
// DecodeTTHeader refused for its variable header, from the bytes read of
// it: enough to address a reply saying why (see RefusedFrameOf).
type RefusedFrame struct {
	// Flags and SeqID are the frame's FLAGS and SEQUENCE NUMBER, Size the
	// bytes its LENGTH declares (the length field included), and
	// PayloadProtocol its PROTOCOL ID.
	Flags           uint16
	SeqID           int32
	Size            int
	PayloadProtocol uint8
	// Whole: the whole frame was read (ReadFrame and ReadMessage took it
	// from the reader, which stands at the next frame). Otherwise the frame
	// was refused from its head (its header size), nothing of it was
	// consumed, and the bytes that follow cannot be trusted.
	Whole bool
	// HasMessage: the Thrift message's header was read from the payload:
	// its Name (a copy), Type and MessageSeqID. A payload behind a
	// transform is not read.
	HasMessage   bool
	Name         string
	Type         thrift.MessageType
	MessageSeqID int32
}

// RefusedFrameOf returns the frame err refused when err is a Protocol error
// of ReadFrame, ReadMessage or DecodeTTHeader for a TTHeader frame whose
// fixed part and PROTOCOL ID were read: one whose header size does not fit
// the frame or exceeds MaxHeaderSize, declares a transform, or holds an info
// block that cannot be decoded (an unknown info id, a count or string past
// the header, more than MaxInfoEntries entries), or whose TTHeaderFramed
// payload length is wrong. A server
// can answer such a request with an exception under the frame's sequence
// id instead of closing the connection unanswered.
func RefusedFrameOf(err error) (RefusedFrame, bool) {
	var r *refusedError
	if errors.As(err, &r) {
		return r.f, true
	}
	return RefusedFrame{}, false
}

// refusedError is the cause of such an error: the kind (and codec error)
// it had, and the frame.
type refusedError struct {
	cause error
	f     RefusedFrame
}

func (e *refusedError) Error() string { return e.cause.Error() }
func (e *refusedError) Unwrap() error { return e.cause }

// refused attaches f to err, a Protocol error built by this package.
func refused(err error, f RefusedFrame) error {
	var e *rpcerr.Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Cause = &refusedError{cause: e.Cause, f: f}
	return &c
}

// refusedHead attaches to err, the refusal of a frame's header size, what
// head (the frame's first bytes, at least its fixed part) says of the frame
// of n bytes, when it holds the PROTOCOL ID.
func refusedHead(err error, head []byte, n int) error {
	if len(head) <= ttFixed || n <= ttFixed {
		return err
	}
	return refused(err, RefusedFrame{
		Flags:           binary.BigEndian.Uint16(head[6:]),
		SeqID:           int32(binary.BigEndian.Uint32(head[8:])),
		Size:            n,
		PayloadProtocol: head[ttFixed],
	})
}

// refusedFrame attaches to err, the refusal of the variable header of
// frame (whole, with a header of hs bytes), what the frame says: its fixed
// part and, unless a transform is declared, its message's header.
func refusedFrame(err error, frame []byte, hs int) error {
	f := RefusedFrame{
		Flags:           binary.BigEndian.Uint16(frame[6:]),
		SeqID:           int32(binary.BigEndian.Uint32(frame[8:])),
		Size:            len(frame),
		PayloadProtocol: frame[ttFixed],
		Whole:           true,
	}
	if frame[ttFixed+1] == 0 {
		p := frame[ttFixed+hs:]
		if f.PayloadProtocol == PayloadBinary && isFramedPayload(p) {
			p = p[4:] // whatever its length says
		}
		name, typ, seq, _, merr := readMessageBegin(p, f.PayloadProtocol)
		if merr == nil {
			f.Type, f.MessageSeqID = typ, seq
			f.HasMessage, f.Name = true, strings.Clone(name)
		}
	}
	return refused(err, f)
}
