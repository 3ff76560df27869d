package transport

import (
	"encoding/binary"
	"fmt"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// WriteMessage writes one whole message frame into w without flushing it:
// the frame header (see BeginFrame), the Thrift message header (name, type,
// seq), and body. The frame is reserved with one w.Malloc and body is written
// straight into it: with FastWriteNocopy when body has it (large strings and
// binaries are linked into w, not copied), else with FastWrite.
//
// h may be nil for Framed and Buffered. With h.PayloadProtocol ==
// PayloadCompact (Framed or TTHeader) the message is written in the compact
// protocol, and body must implement thrift.CompactCodec; any payload
// protocol but PayloadBinary and PayloadCompact is refused (ErrUnsupported). A TTHeader frame's
// SEQUENCE NUMBER is seq (h.SeqID is not used). A body whose FastWrite does
// not write BLength bytes is a bug in the body: the frame is withdrawn from w
// and the error has code rpcerr.Internal.
func WriteMessage(w buf.Writer, p Protocol, h *Header, name string, typ thrift.MessageType, seq int32, body thrift.FastCodec) error {
	compact := h != nil && h.PayloadProtocol == PayloadCompact
	if h != nil && !compact && h.PayloadProtocol != PayloadBinary {
		return protoErr(ErrUnsupported, "payload protocol id %d (Petrel writes 0 binary and 2 compact)", h.PayloadProtocol)
	}
	var cc thrift.CompactCodec
	var msgLen int
	if compact {
		if p == Buffered {
			return protoErr(ErrUnsupported, "buffered transport carries only the binary protocol")
		}
		var ok bool
		if cc, ok = body.(thrift.CompactCodec); !ok {
			return rpcerr.New(rpcerr.Internal, "transport: compact payload requested but the body has no compact codec")
		}
		msgLen = thrift.Compact.MessageBeginLength(name, seq) + cc.BLengthCompact()
	} else {
		msgLen = thrift.Binary.MessageBeginLength(name) + body.BLength()
	}
	start := w.MallocLen()
	b, err := beginFrame(w, p, h, seq, msgLen)
	if err != nil {
		return err
	}
	frameLen := w.MallocLen() - start
	var n int
	if compact {
		n = thrift.Compact.WriteMessageBegin(b, name, typ, seq)
		n += cc.FastWriteCompact(b[n:])
	} else {
		n = thrift.Binary.WriteMessageBegin(b, name, typ, seq)
		if nc, ok := body.(thrift.NocopyCodec); ok {
			n += nc.FastWriteNocopy(b[n:], w)
		} else {
			n += body.FastWrite(b[n:])
		}
	}
	// Bytes linked by FastWriteNocopy took the place of the room's unused tail.
	lent := w.MallocLen() - start - frameLen
	if n+lent != msgLen {
		_ = w.MallocAck(start)
		return rpcerr.New(rpcerr.Internal, fmt.Sprintf("transport: message %q: %d bytes written, %d announced by BLength", name, n+lent, msgLen))
	}
	if lent > 0 {
		return w.MallocAck(start + frameLen)
	}
	return nil
}

// ReadMessage reads one frame of protocol p from r (see ReadFrame for maxSize,
// blocking and errors), then the Thrift message header in it. It returns the
// message's name, type and sequence id, and body: the bytes after the message
// header, to be read with the args' or result's FastRead (FastReadCompact
// when h.PayloadProtocol is PayloadCompact). For Framed and Buffered it sets
// h.SeqID to seq.
//
// For the binary protocol, name and body are views of r's memory, valid until
// r.Release: the server looks its method up by name and keeps nothing of it.
// Copy name (or use the method table's own string) to keep it longer.
func ReadMessage(r buf.Reader, p Protocol, maxSize int, h *Header) (name string, typ thrift.MessageType, seq int32, body []byte, err error) {
	if h == nil {
		h = new(Header)
	}
	payload, err := ReadFrame(r, p, maxSize, h)
	if err != nil {
		return "", 0, 0, nil, err
	}
	name, typ, seq, n, err := readMessageBegin(payload, h.PayloadProtocol)
	if err != nil {
		return "", 0, 0, nil, err
	}
	if p != TTHeader {
		h.SeqID = seq
	}
	return name, typ, seq, payload[n:], nil
}

// readMessageBegin reads the Thrift message header at the start of payload,
// in the payload protocol proto, with the name as a view of payload; n is
// the header's size.
func readMessageBegin(payload []byte, proto uint8) (name string, typ thrift.MessageType, seq int32, n int, err error) {
	switch proto {
	case PayloadBinary:
		return readBinaryMessageBegin(payload)
	case PayloadCompact:
		name, typ, seq, n, err = thrift.Compact.ReadMessageBegin(payload)
		if err != nil {
			return "", 0, 0, 0, wrapProto(ErrBadMessage, err, "compact message header")
		}
		if typ < thrift.CALL || typ > thrift.ONEWAY {
			return "", 0, 0, 0, protoErr(ErrBadMessage, "message type %d", typ)
		}
		return name, typ, seq, n, nil
	}
	return "", 0, 0, 0, protoErr(ErrUnsupported, "payload protocol id %d (Petrel reads 0 binary and 2 compact)", proto)
}

// readBinaryMessageBegin reads a binary message header, strict (version word,
// name, seq) or old-style (name, type byte, seq), with the name as a view of
// b.
func readBinaryMessageBegin(b []byte) (name string, typ thrift.MessageType, seq int32, n int, err error) {
	if len(b) < 4 {
		return "", 0, 0, 0, protoErr(ErrBadMessage, "message header needs 4 bytes, %d in the frame", len(b))
	}
	v := binary.BigEndian.Uint32(b)
	var nl uint32
	var pos int
	if v&0x80000000 != 0 {
		if v&0xffff0000 != 0x80010000 {
			return "", 0, 0, 0, protoErr(ErrBadMessage, "message starts with 0x%08x, want version 0x8001", v)
		}
		typ = thrift.MessageType(v & 0xff)
		if len(b) < 8 {
			return "", 0, 0, 0, protoErr(ErrBadMessage, "message header needs 8 bytes, %d in the frame", len(b))
		}
		nl = binary.BigEndian.Uint32(b[4:])
		pos = 8
	} else {
		nl = v
		pos = 4
	}
	if uint64(nl) > uint64(len(b)-pos) {
		return "", 0, 0, 0, protoErr(ErrBadMessage, "method name of %d bytes, %d left in the frame", nl, len(b)-pos)
	}
	if max := thrift.CurrentLimits().MaxStringSize; uint64(nl) > uint64(max) {
		// As the codec refuses it (and the compact reader here).
		return "", 0, 0, 0, protoErr(ErrBadMessage, "method name of %d bytes exceeds the limit of %d", nl, max)
	}
	name = unsafeString(b[pos : pos+int(nl)])
	pos += int(nl)
	if v&0x80000000 == 0 {
		if pos >= len(b) {
			return "", 0, 0, 0, protoErr(ErrBadMessage, "message type missing")
		}
		typ = thrift.MessageType(b[pos])
		pos++
	}
	if len(b)-pos < 4 {
		return "", 0, 0, 0, protoErr(ErrBadMessage, "sequence id needs 4 bytes, %d left in the frame", len(b)-pos)
	}
	if typ < thrift.CALL || typ > thrift.ONEWAY {
		return "", 0, 0, 0, protoErr(ErrBadMessage, "message type %d", typ)
	}
	seq = int32(binary.BigEndian.Uint32(b[pos:]))
	return name, typ, seq, pos + 4, nil
}
