package transport

import (
	"encoding/binary"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
)

// Buffered framing: the message carries no length, so its end is found by
// walking it. The reader is asked only for bytes the message must contain:
// each step of the walk knows a lower bound of the message's size (the end of
// the value it is at), and ReadFrame never peeks past both that bound and the
// bytes already buffered. A blocking reader therefore never waits for bytes
// of a next message that may not come.
//
// The walk first tries codec/thrift's Skip on all the bytes at hand (the
// usual case: the whole message arrived in one read). When Skip runs out of
// bytes, a resumable walker takes over: it keeps a stack of the structs and
// containers it is inside and the offset of the first value not yet
// complete, and on each new peek it goes on from there, so every byte is
// walked once however the message is split. It applies the same checks as
// Skip (codec/thrift's limits on strings, containers and depth, element
// types), and FuzzReadFrame checks that both agree.
//
// Each peek asks again for the message from its start, since a Reader peeks
// only from its read position. When those bytes span a LinkBuffer's nodes
// (so on a connection), the LinkBuffer copies them into one block and a
// longer Peek at the same position copies only the bytes it adds, and the
// final Next takes that block: a message that arrives in many pieces costs
// O(its size) in bytes copied and memory held, not O(size²).

// readBuffered reads one unframed binary message.
func readBuffered(r buf.Reader, maxSize int) ([]byte, error) {
	var w walker
	need := 8 // version word and name length
	win := 4 << 10
	for {
		want := min(r.Len(), win)
		want = min(max(want, need), maxSize)
		b, err := r.Peek(want)
		if err != nil {
			return nil, err
		}
		end, more, err := w.walk(b, maxSize)
		if err != nil {
			return nil, err
		}
		if end > 0 {
			return r.Next(end)
		}
		need = more
		if win < maxSize/2 {
			win *= 2
		}
	}
}

// checkBufferedVersion refuses a Buffered message whose first word v is not
// a strict binary header's.
func checkBufferedVersion(v uint32) error {
	if v&0xffff0000 != 0x80010000 {
		return protoErr(ErrBadMessage, "buffered: message starts with 0x%08x, want a strict binary header 0x8001", v)
	}
	return nil
}

// Frame kinds of the walker's stack.
const (
	walkStruct = iota
	walkList
	walkMap
)

// walkFrame is a struct or container the walker is inside.
type walkFrame struct {
	kind uint8
	a, b thrift.TType // list: a is the element type; map: key a, value b
	left int          // list: elements left; map: keys and values left
}

// walker finds the end of a binary message in growing prefixes of it. Its
// state is positions and types only, never slices, since each peek may
// return different memory.
type walker struct {
	pos     int // offset of the first byte not yet walked
	begun   bool
	pending bool         // a value of type pend is due at pos
	pend    thrift.TType // its type
	stack   []walkFrame  // allocated on the first step inside (slow path only)
}

// walk goes on walking the message in b (a longer prefix than the last call
// saw). It returns the message's size when it is complete; else 0 and the
// number of bytes it needs before it can go on.
func (w *walker) walk(b []byte, maxSize int) (end, need int, err error) {
	if !w.begun {
		if len(b) < 8 {
			need, err := w.needAt(8, maxSize)
			return 0, need, err
		}
		v := binary.BigEndian.Uint32(b)
		if err := checkBufferedVersion(v); err != nil {
			return 0, 0, err
		}
		if t := v & 0xff; t < 1 || t > 4 {
			return 0, 0, protoErr(ErrBadMessage, "buffered: message type %d", t)
		}
		nl := int32(binary.BigEndian.Uint32(b[4:]))
		if nl < 0 {
			return 0, 0, protoErr(ErrBadMessage, "buffered: method name length %d is negative", nl)
		}
		// Compared in 64 bits: 12 + nl overflows a 32-bit int.
		if uint64(nl)+13 > uint64(maxSize) {
			return 0, 0, protoErr(ErrFrameTooLarge, "buffered: message of at least %d bytes, limit %d", uint64(nl)+13, maxSize)
		}
		hdr := 12 + int(nl)
		if max := thrift.CurrentLimits().MaxStringSize; int(nl) > max {
			return 0, 0, protoErr(ErrBadMessage, "buffered: method name of %d bytes exceeds the limit of %d", nl, max)
		}
		if len(b) < hdr {
			return 0, hdr, nil
		}
		w.begun = true
		w.pos = hdr
		n, err := thrift.Binary.Skip(b[hdr:], thrift.STRUCT, 0)
		if err == nil {
			return hdr + n, 0, nil
		}
		if thrift.KindOf(err) != thrift.UnexpectedEOF {
			return 0, 0, wrapProto(ErrBadMessage, err, "buffered: message body")
		}
		w.stack = append(w.stack[:0], walkFrame{kind: walkStruct})
	}
	for {
		if w.pending {
			need, err := w.value(b, w.pend, maxSize)
			if err != nil || need > 0 {
				return 0, need, err
			}
			w.pending = false
		}
		if len(w.stack) == 0 {
			return w.pos, 0, nil
		}
		top := &w.stack[len(w.stack)-1]
		switch top.kind {
		case walkStruct:
			if w.pos >= len(b) {
				need, err := w.needAt(w.pos+1, maxSize)
				return 0, need, err
			}
			t := thrift.TType(b[w.pos])
			if t == thrift.STOP {
				w.pos++
				w.stack = w.stack[:len(w.stack)-1]
				continue
			}
			if w.pos+3 > len(b) {
				need, err := w.needAt(w.pos+3, maxSize)
				return 0, need, err
			}
			w.pos += 3
			w.pend = t
		case walkList:
			if top.left == 0 {
				w.stack = w.stack[:len(w.stack)-1]
				continue
			}
			top.left--
			w.pend = top.a
		default: // walkMap
			if top.left == 0 {
				w.stack = w.stack[:len(w.stack)-1]
				continue
			}
			if top.left%2 == 0 {
				w.pend = top.a
			} else {
				w.pend = top.b
			}
			top.left--
		}
		w.pending = true
	}
}

// needAt returns the need for a message of at least n bytes, or
// ErrFrameTooLarge if that is over the limit.
func (w *walker) needAt(n, maxSize int) (int, error) {
	if n > maxSize {
		return 0, protoErr(ErrFrameTooLarge, "buffered: message of at least %d bytes, limit %d", n, maxSize)
	}
	return n, nil
}

// fixedSize is the binary size of the fixed-size types, 0 for others.
func fixedSize(t thrift.TType) int {
	switch t {
	case thrift.BOOL, thrift.BYTE:
		return 1
	case thrift.I16:
		return 2
	case thrift.I32:
		return 4
	case thrift.I64, thrift.DOUBLE:
		return 8
	case thrift.UUID:
		return 16
	}
	return 0
}

// minSize is the smallest binary size of a value of type t, 0 for a tag that
// is no value type.
func minSize(t thrift.TType) int {
	switch t {
	case thrift.STRING:
		return 4
	case thrift.STRUCT:
		return 1
	case thrift.LIST, thrift.SET:
		return 5
	case thrift.MAP:
		return 6
	}
	return fixedSize(t)
}

// value walks one value of type t at w.pos: it moves pos past it, or past
// its header after pushing a frame for it, or leaves pos and returns the
// bytes it needs.
func (w *walker) value(b []byte, t thrift.TType, maxSize int) (need int, err error) {
	if f := fixedSize(t); f != 0 {
		if w.pos+f > len(b) {
			return w.needAt(w.pos+f, maxSize)
		}
		w.pos += f
		return 0, nil
	}
	lim := thrift.CurrentLimits()
	switch t {
	case thrift.STRING:
		if w.pos+4 > len(b) {
			return w.needAt(w.pos+4, maxSize)
		}
		n := int32(binary.BigEndian.Uint32(b[w.pos:]))
		if n < 0 {
			return 0, protoErr(ErrBadMessage, "buffered: string size %d is negative at byte %d", n, w.pos)
		}
		if int(n) > lim.MaxStringSize {
			return 0, protoErr(ErrBadMessage, "buffered: string of %d bytes exceeds the limit of %d at byte %d", n, lim.MaxStringSize, w.pos)
		}
		// Compared in 64 bits: pos + 4 + n overflows a 32-bit int.
		if end := uint64(w.pos) + 4 + uint64(n); end > uint64(maxSize) {
			return 0, protoErr(ErrFrameTooLarge, "buffered: message of at least %d bytes, limit %d", end, maxSize)
		} else if int(end) > len(b) {
			return int(end), nil
		}
		w.pos += 4 + int(n)
		return 0, nil
	case thrift.STRUCT, thrift.LIST, thrift.SET, thrift.MAP:
	default:
		return 0, protoErr(ErrBadMessage, "buffered: unknown type %d at byte %d", t, w.pos)
	}
	if len(w.stack)+1 > lim.MaxDepth {
		return 0, protoErr(ErrBadMessage, "buffered: structs and containers nest deeper than %d levels at byte %d", lim.MaxDepth, w.pos)
	}
	switch t {
	case thrift.STRUCT:
		w.stack = append(w.stack, walkFrame{kind: walkStruct})
		return 0, nil
	case thrift.MAP:
		if w.pos+6 > len(b) {
			return w.needAt(w.pos+6, maxSize)
		}
		k, v := thrift.TType(b[w.pos]), thrift.TType(b[w.pos+1])
		size := int32(binary.BigEndian.Uint32(b[w.pos+2:]))
		mk, mv := minSize(k), minSize(v)
		if err := w.checkContainer("map", size, mk*mv, lim); err != nil {
			return 0, err
		}
		if end := uint64(w.pos) + 6 + uint64(size)*uint64(mk+mv); end > uint64(maxSize) {
			return 0, protoErr(ErrFrameTooLarge, "buffered: map of %d entries needs at least %d bytes, limit %d", size, end, maxSize)
		}
		if fk, fv := fixedSize(k), fixedSize(v); fk != 0 && fv != 0 {
			end := w.pos + 6 + int(size)*(fk+fv)
			if end > len(b) {
				return end, nil
			}
			w.pos = end
			return 0, nil
		}
		w.pos += 6
		w.stack = append(w.stack, walkFrame{kind: walkMap, a: k, b: v, left: 2 * int(size)})
		return 0, nil
	default: // LIST, SET
		if w.pos+5 > len(b) {
			return w.needAt(w.pos+5, maxSize)
		}
		e := thrift.TType(b[w.pos])
		size := int32(binary.BigEndian.Uint32(b[w.pos+1:]))
		me := minSize(e)
		if err := w.checkContainer(t.String(), size, me, lim); err != nil {
			return 0, err
		}
		if end := uint64(w.pos) + 5 + uint64(size)*uint64(me); end > uint64(maxSize) {
			return 0, protoErr(ErrFrameTooLarge, "buffered: %s of %d elements needs at least %d bytes, limit %d", t, size, end, maxSize)
		}
		if f := fixedSize(e); f != 0 {
			end := w.pos + 5 + int(size)*f
			if end > len(b) {
				return end, nil
			}
			w.pos = end
			return 0, nil
		}
		w.pos += 5
		w.stack = append(w.stack, walkFrame{kind: walkList, a: e, left: int(size)})
		return 0, nil
	}
}

// checkContainer checks a declared container size; known is 0 when an
// element type is not a value type.
func (w *walker) checkContainer(what string, size int32, known int, lim thrift.Limits) error {
	switch {
	case size < 0:
		return protoErr(ErrBadMessage, "buffered: %s size %d is negative at byte %d", what, size, w.pos)
	case int(size) > lim.MaxContainerSize:
		return protoErr(ErrBadMessage, "buffered: %s of %d elements exceeds the limit of %d at byte %d", what, size, lim.MaxContainerSize, w.pos)
	case size > 0 && known == 0:
		return protoErr(ErrBadMessage, "buffered: %s has an unknown element type at byte %d", what, w.pos)
	}
	return nil
}
