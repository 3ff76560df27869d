package transport

import (
	"encoding/binary"

	"github.com/petrel-rpc/petrel/buf"
)

// TTHeader layout (docs/spec/ttheader.md).
const (
	// ttFixed is the fixed part of a TTHeader frame: LENGTH(4) MAGIC(2)
	// FLAGS(2) SEQUENCE NUMBER(4) HEADER SIZE(2).
	ttFixed = 14
	// ttMagic is the value of bytes 4-5.
	ttMagic = 0x1000
	// MaxHeaderSize is the largest TTHeader header (the bytes from offset 14
	// to the payload) Petrel writes or accepts: 64 KiB, Kitex's limit.
	MaxHeaderSize = 64 << 10
	// maxInfoString is the longest string in a header: its length is a uint16.
	maxInfoString = 1<<16 - 1
	// MaxInfoEntries is the most key/value entries (INFO_KEYVALUE and
	// INFO_INTKEYVALUE together) Petrel accepts in a header. Each entry
	// becomes a map entry of the Header, which a request holds while it is
	// served: 16,000 entries of 4 bytes (64 KiB on the wire) took some
	// 860 KiB of memory.
	MaxInfoEntries = 1024
)

// TTHeader info block ids.
const (
	infoPadding     = 0x00
	infoKeyValue    = 0x01
	infoIntKeyValue = 0x10
	infoACLToken    = 0x11
)

// readTTHeader reads a TTHeader frame.
func readTTHeader(r buf.Reader, maxSize int, h *Header) ([]byte, error) {
	if r.Len() < ttFixed {
		// A frame too short for the fixed header is refused from its
		// LENGTH: a blocking reader would wait for bytes not in it.
		head, err := r.Peek(4)
		if err != nil {
			return nil, err
		}
		switch l := binary.BigEndian.Uint32(head); {
		case l > maxWireFrame:
			return nil, errNegativeTT(l)
		case l < ttFixed-4:
			return nil, protoErr(ErrBadFrame, "ttheader: frame of %d bytes declared, the fixed header alone is %d", uint64(l)+4, ttFixed)
		}
	}
	head, err := r.Peek(ttFixed)
	if err != nil {
		return nil, err
	}
	n, hs, err := checkTTHead(head, maxSize)
	if err != nil {
		if r.Len() > ttFixed {
			// With the PROTOCOL ID arrived, a refused header size can
			// say how to address a reply (RefusedFrameOf).
			if b, perr := r.Peek(ttFixed + 1); perr == nil {
				_, _, err = checkTTHead(b, maxSize)
			}
		}
		return nil, err
	}
	frame, err := r.Next(n)
	if err != nil {
		return nil, err
	}
	return decodeTTFrame(frame, hs, h)
}

// checkTTHead checks the fixed part of a TTHeader frame and returns the
// frame's size and its header's size. When head also holds the PROTOCOL ID,
// a refused header size carries the frame's head (RefusedFrameOf).
func checkTTHead(head []byte, maxSize int) (n, hs int, err error) {
	l := binary.BigEndian.Uint32(head)
	if l > maxWireFrame {
		return 0, 0, errNegativeTT(l)
	}
	n64 := uint64(l) + 4
	if n64 > uint64(maxSize) {
		return 0, 0, protoErr(ErrFrameTooLarge, "ttheader: frame of %d bytes declared, limit %d", n64, maxSize)
	}
	if m := binary.BigEndian.Uint16(head[4:]); m != ttMagic {
		return 0, 0, protoErr(ErrBadFrame, "ttheader: magic is 0x%04x, want 0x1000", m)
	}
	n = int(n64)
	hs = int(binary.BigEndian.Uint16(head[12:])) * 4
	switch {
	case hs < 2:
		return 0, 0, protoErr(ErrBadFrame, "ttheader: header size %d is below the 2 bytes of protocol id and transform count", hs)
	case hs > MaxHeaderSize:
		return 0, 0, refusedHead(protoErr(ErrBadFrame, "ttheader: header of %d bytes exceeds the limit of %d", hs, MaxHeaderSize), head, n)
	case ttFixed+hs > n:
		return 0, 0, refusedHead(protoErr(ErrBadFrame, "ttheader: header of %d bytes does not fit in a frame of %d", hs, n), head, n)
	}
	return n, hs, nil
}

// errNegativeTT refuses a LENGTH with its top bit set, which no writer
// produces (the field is an i32 and frames stay below 2 GiB).
func errNegativeTT(l uint32) error {
	return protoErr(ErrBadFrame, "ttheader: frame length 0x%08x is negative (top bit set)", l)
}

// decodeTTFrame decodes a whole TTHeader frame whose header is hs bytes.
func decodeTTFrame(frame []byte, hs int, h *Header) ([]byte, error) {
	h.Flags = binary.BigEndian.Uint16(frame[6:])
	h.SeqID = int32(binary.BigEndian.Uint32(frame[8:]))
	if err := h.decodeInfo(frame[ttFixed : ttFixed+hs]); err != nil {
		return nil, refusedFrame(err, frame, hs)
	}
	p, err := unframePayload(frame[ttFixed+hs:], h.PayloadProtocol)
	if err != nil {
		return nil, refusedFrame(err, frame, hs)
	}
	return p, nil
}

// unframePayload removes the 4-byte length a Kitex client configured with
// transport.TTHeaderFramed puts in front of a binary message inside the
// TTHeader payload (Kitex servers accept both forms, as Petrel does). Such a
// payload is told from a bare one by the strict binary version 0x8001 at
// bytes 4-5; a bare strict message has it at bytes 0-1.
func unframePayload(p []byte, proto uint8) ([]byte, error) {
	if proto != PayloadBinary || !isFramedPayload(p) {
		return p, nil
	}
	if n := binary.BigEndian.Uint32(p); uint64(n) != uint64(len(p)-4) {
		return nil, protoErr(ErrBadFrame, "ttheader: framed payload declares %d bytes, %d follow its length", n, len(p)-4)
	}
	return p[4:], nil
}

// isFramedPayload reports whether binary payload p starts with the length
// of TTHeaderFramed (see unframePayload).
func isFramedPayload(p []byte) bool {
	return len(p) >= 8 && p[0]&0x80 == 0 && p[4] == 0x80 && p[5] == 0x01
}

// DecodeTTHeader decodes the TTHeader frame at the start of b into h (after
// resetting it) and returns the payload (a sub-slice of b) and the frame's
// size. It is ReadFrame for a byte slice; b must hold the whole frame, else
// the error's cause is ErrBadFrame.
func DecodeTTHeader(b []byte, maxSize int, h *Header) (payload []byte, n int, err error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxFrameSize
	}
	if h == nil {
		h = new(Header)
	}
	h.Reset()
	h.Protocol = TTHeader
	if len(b) < ttFixed {
		return nil, 0, protoErr(ErrBadFrame, "ttheader: %d bytes, the fixed header alone is %d", len(b), ttFixed)
	}
	n, hs, err := checkTTHead(b, maxSize)
	if err != nil {
		return nil, 0, err
	}
	if n > len(b) {
		return nil, 0, protoErr(ErrBadFrame, "ttheader: frame of %d bytes declared, %d given", n, len(b))
	}
	payload, err = decodeTTFrame(b[:n], hs, h)
	if err != nil {
		return nil, 0, err
	}
	return payload, n, nil
}

// decodeInfo decodes the variable header hb (from offset 14, padding
// included) into h.
func (h *Header) decodeInfo(hb []byte) error {
	h.PayloadProtocol = hb[0]
	if t := int(hb[1]); t != 0 {
		if 2+t > len(hb) {
			return protoErr(ErrBadFrame, "ttheader: %d transform ids declared, %d header bytes left", t, len(hb)-2)
		}
		return protoErr(ErrUnsupported, "ttheader: transform id %d requested; Petrel supports no transforms", hb[2])
	}
	d := infoDecoder{h: h, hb: hb, remember: len(hb) <= rememberMax}
	pos := 2
	for pos < len(hb) {
		id := hb[pos]
		pos++
		var err error
		switch id {
		case infoPadding:
			continue
		case infoKeyValue:
			pos, err = d.keyValues(pos)
		case infoIntKeyValue:
			pos, err = d.intKeyValues(pos)
		case infoACLToken:
			var s []byte
			s, pos, err = d.str(pos, "ACL token")
			if err == nil {
				h.ACLToken = d.keep(s, h.aclSeen)
				if d.remember {
					h.aclSeen = h.ACLToken
				}
			}
		default:
			return protoErr(ErrBadFrame, "ttheader: unknown info id 0x%02x at header byte %d", id, pos-1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// infoDecoder reads the info blocks of one header. Strings are taken from
// the Header's remembered strings when equal, else from arena: one private
// copy of the header, made on the first string that needs it.
type infoDecoder struct {
	h        *Header
	hb       []byte
	arena    []byte
	remember bool // remember new strings in h (small headers only)
	entries  int  // key/value entries read so far (MaxInfoEntries)
}

// u16 reads a uint16 at pos; what and part name it in errors.
func (d *infoDecoder) u16(pos int, what, part string) (uint16, int, error) {
	if len(d.hb)-pos < 2 {
		return 0, pos, protoErr(ErrBadFrame, "ttheader: %s%s needs 2 bytes at header byte %d, %d left", what, part, pos, len(d.hb)-pos)
	}
	return binary.BigEndian.Uint16(d.hb[pos:]), pos + 2, nil
}

// str reads a uint16-length-prefixed string at pos; the result aliases hb.
func (d *infoDecoder) str(pos int, what string) ([]byte, int, error) {
	n, pos, err := d.u16(pos, what, " length")
	if err != nil {
		return nil, pos, err
	}
	if int(n) > len(d.hb)-pos {
		return nil, pos, protoErr(ErrBadFrame, "ttheader: %s of %d bytes at header byte %d, %d left", what, n, pos, len(d.hb)-pos)
	}
	return d.hb[pos : pos+int(n)], pos + int(n), nil
}

// count reads an entry count and checks that count entries of at least min
// bytes fit in the header.
func (d *infoDecoder) count(pos, min int, what string) (int, int, error) {
	c, pos, err := d.u16(pos, what, " count")
	if err != nil {
		return 0, pos, err
	}
	if int(c)*min > len(d.hb)-pos {
		return 0, pos, protoErr(ErrBadFrame, "ttheader: %d %s entries declared, only %d header bytes left", c, what, len(d.hb)-pos)
	}
	if d.entries += int(c); d.entries > MaxInfoEntries {
		return 0, pos, protoErr(ErrBadFrame, "ttheader: %d key/value entries, over the limit of %d", d.entries, MaxInfoEntries)
	}
	return int(c), pos, nil
}

// keep returns s as a string: prev if it has the same bytes, else a view of
// the arena.
func (d *infoDecoder) keep(s []byte, prev string) string {
	if prev == string(s) {
		return prev
	}
	if d.arena == nil {
		d.arena = make([]byte, len(d.hb))
		copy(d.arena, d.hb)
	}
	off := cap(d.hb) - cap(s) // s is a sub-slice of hb
	return unsafeString(d.arena[off : off+len(s)])
}

func (d *infoDecoder) keyValues(pos int) (int, error) {
	c, pos, err := d.count(pos, 4, "INFO_KEYVALUE")
	if err != nil || c == 0 {
		return pos, err
	}
	h := d.h
	if h.StrInfo == nil {
		h.StrInfo = make(map[string]string, min(c, 16))
	}
	if h.strSeen == nil {
		h.strSeen = make(map[string]strPair, min(c, maxSeen))
	}
	for range c {
		var k, v []byte
		if k, pos, err = d.str(pos, "INFO_KEYVALUE key"); err != nil {
			return pos, err
		}
		if v, pos, err = d.str(pos, "INFO_KEYVALUE value"); err != nil {
			return pos, err
		}
		seen, ok := h.strSeen[string(k)]
		if ok && seen.val == string(v) {
			h.StrInfo[seen.key] = seen.val
			continue
		}
		if !ok {
			seen.key = d.keep(k, "")
		}
		seen.val = d.keep(v, "")
		h.StrInfo[seen.key] = seen.val
		if d.remember {
			if len(h.strSeen) >= maxSeen {
				clear(h.strSeen)
			}
			h.strSeen[seen.key] = seen
		}
	}
	return pos, nil
}

func (d *infoDecoder) intKeyValues(pos int) (int, error) {
	c, pos, err := d.count(pos, 4, "INFO_INTKEYVALUE")
	if err != nil || c == 0 {
		return pos, err
	}
	h := d.h
	if h.IntInfo == nil {
		h.IntInfo = make(map[uint16]string, min(c, 16))
	}
	if h.intSeen == nil {
		h.intSeen = make(map[uint16]string, min(c, maxSeen))
	}
	for range c {
		var k uint16
		var v []byte
		if k, pos, err = d.u16(pos, "INFO_INTKEYVALUE key", ""); err != nil {
			return pos, err
		}
		if v, pos, err = d.str(pos, "INFO_INTKEYVALUE value"); err != nil {
			return pos, err
		}
		prev, ok := h.intSeen[k]
		s := d.keep(v, prev)
		if d.remember && (!ok || s != prev) {
			if len(h.intSeen) >= maxSeen {
				clear(h.intSeen)
			}
			h.intSeen[k] = s
		}
		h.IntInfo[k] = s
	}
	return pos, nil
}

// infoSize returns the size of h's variable header, padding included, and
// checks that it can be encoded.
func (h *Header) infoSize() (int, error) {
	n := 2 // PROTOCOL ID, NUM TRANSFORMS
	if len(h.StrInfo) > 0 {
		if len(h.StrInfo) > maxInfoString {
			return 0, protoErr(ErrHeaderTooLarge, "ttheader: %d string keys, at most %d fit", len(h.StrInfo), maxInfoString)
		}
		n += 3
		for k, v := range h.StrInfo {
			if len(k) > maxInfoString {
				return 0, protoErr(ErrHeaderTooLarge, "ttheader: INFO_KEYVALUE key %q is %d bytes, at most %d fit", trim(k), len(k), maxInfoString)
			}
			if len(v) > maxInfoString {
				return 0, protoErr(ErrHeaderTooLarge, "ttheader: INFO_KEYVALUE value of key %q is %d bytes, at most %d fit", trim(k), len(v), maxInfoString)
			}
			n += 4 + len(k) + len(v)
		}
	}
	if len(h.IntInfo) > 0 {
		if len(h.IntInfo) > maxInfoString {
			return 0, protoErr(ErrHeaderTooLarge, "ttheader: %d integer keys, at most %d fit", len(h.IntInfo), maxInfoString)
		}
		n += 3
		for k, v := range h.IntInfo {
			if len(v) > maxInfoString {
				return 0, protoErr(ErrHeaderTooLarge, "ttheader: INFO_INTKEYVALUE value of key %d is %d bytes, at most %d fit", k, len(v), maxInfoString)
			}
			n += 4 + len(v)
		}
	}
	if h.ACLToken != "" {
		if len(h.ACLToken) > maxInfoString {
			return 0, protoErr(ErrHeaderTooLarge, "ttheader: ACL token is %d bytes, at most %d fit", len(h.ACLToken), maxInfoString)
		}
		n += 3 + len(h.ACLToken)
	}
	if e := len(h.StrInfo) + len(h.IntInfo); e > MaxInfoEntries {
		return 0, protoErr(ErrHeaderTooLarge, "ttheader: %d key/value entries, over the limit of %d that a Petrel peer accepts", e, MaxInfoEntries)
	}
	n += (4 - n%4) % 4
	if n > MaxHeaderSize {
		return 0, protoErr(ErrHeaderTooLarge, "ttheader: header of %d bytes exceeds the limit of %d", n, MaxHeaderSize)
	}
	return n, nil
}

func trim(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// beginTTHeader writes a TTHeader frame's header for a payload of payloadLen
// bytes and returns the payload room.
func beginTTHeader(w buf.Writer, h *Header, seq int32, payloadLen int) ([]byte, error) {
	var empty Header
	if h == nil {
		h = &empty
	}
	hs, err := h.infoSize()
	if err != nil {
		return nil, err
	}
	total := ttFixed + hs + payloadLen
	if payloadLen > maxWireFrame-ttFixed-hs || total-4 > maxWireFrame {
		return nil, protoErr(ErrFrameTooLarge, "ttheader: frame of %d bytes exceeds the 2 GiB the length field holds", uint64(ttFixed+hs)+uint64(payloadLen))
	}
	b, err := w.Malloc(total)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(b, uint32(total-4))
	binary.BigEndian.PutUint16(b[4:], ttMagic)
	binary.BigEndian.PutUint16(b[6:], h.Flags)
	binary.BigEndian.PutUint32(b[8:], uint32(seq))
	binary.BigEndian.PutUint16(b[12:], uint16(hs/4))
	h.encodeInfo(b[ttFixed : ttFixed+hs])
	return b[ttFixed+hs:], nil
}

// encodeInfo writes the variable header into hb, which has exactly the size
// infoSize returned: INFO_KEYVALUE, INFO_INTKEYVALUE, INFO_ACL_TOKEN (each
// only when not empty), then zero padding.
func (h *Header) encodeInfo(hb []byte) {
	hb[0] = h.PayloadProtocol
	hb[1] = 0
	pos := 2
	if len(h.StrInfo) > 0 {
		hb[pos] = infoKeyValue
		binary.BigEndian.PutUint16(hb[pos+1:], uint16(len(h.StrInfo)))
		pos += 3
		for k, v := range h.StrInfo {
			pos = putStr(hb, pos, k)
			pos = putStr(hb, pos, v)
		}
	}
	if len(h.IntInfo) > 0 {
		hb[pos] = infoIntKeyValue
		binary.BigEndian.PutUint16(hb[pos+1:], uint16(len(h.IntInfo)))
		pos += 3
		for k, v := range h.IntInfo {
			binary.BigEndian.PutUint16(hb[pos:], k)
			pos = putStr(hb, pos+2, v)
		}
	}
	if h.ACLToken != "" {
		hb[pos] = infoACLToken
		pos = putStr(hb, pos+1, h.ACLToken)
	}
	clear(hb[pos:])
}

func putStr(b []byte, pos int, s string) int {
	binary.BigEndian.PutUint16(b[pos:], uint16(len(s)))
	return pos + 2 + copy(b[pos+2:], s)
}
