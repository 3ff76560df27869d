package buf

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
)

// NocopyThreshold is the size from which WriteBinary and WriteString link the
// caller's bytes into the buffer by reference instead of copying them.
const NocopyThreshold = 4096

// Node sizes: the smallest block a writer takes, and the range readers' Book
// grows within.
const (
	defaultNodeSize = 4096
	minBookSize     = 4096
	maxBookSize     = 64 << 10
)

// Reader is the nocopy read side of a buffer. Slices it returns stay valid until
// Release and must not be modified (they may be memory the writer lent).
type Reader interface {
	// Next returns the next n bytes and advances past them.
	Next(n int) ([]byte, error)
	// Peek returns the next n bytes without advancing.
	Peek(n int) ([]byte, error)
	// Skip advances past the next n bytes.
	Skip(n int) error
	// Until returns the bytes up to and including the first delim and advances
	// past them.
	Until(delim byte) ([]byte, error)
	// ReadByte returns the next byte.
	ReadByte() (byte, error)
	// ReadString returns a copy of the next n bytes as a string.
	ReadString(n int) (string, error)
	// ReadBinary returns a copy of the next n bytes.
	ReadBinary(n int) ([]byte, error)
	// Slice returns the next n bytes as a new Reader sharing this one's memory,
	// and advances past them. The returned Reader must be released on its own.
	Slice(n int) (Reader, error)
	// Release gives back the memory of everything read so far. Slices returned
	// earlier by Next, Peek and Until must not be used after it.
	Release() error
	// Len returns the number of readable bytes.
	Len() int
}

// Writer is the nocopy write side of a buffer. Written bytes become readable at
// Flush.
type Writer interface {
	// Malloc returns n writable bytes at the end of the buffer.
	Malloc(n int) ([]byte, error)
	// MallocLen returns the number of bytes written since the last Flush.
	MallocLen() int
	// MallocAck keeps the first n bytes written since the last Flush and drops
	// the rest.
	MallocAck(n int) error
	// WriteByte appends one byte.
	WriteByte(b byte) error
	// WriteString appends s; from NocopyThreshold bytes on it is linked, not
	// copied.
	WriteString(s string) (int, error)
	// WriteBinary appends p; from NocopyThreshold bytes on it is linked, not
	// copied, and must not change until it has been written out or the reader
	// has released it (bytes read with Next, Peek or Until still point at it).
	WriteBinary(p []byte) (int, error)
	// WriteDirect links p into the buffer before the last remainCap bytes of
	// the most recent Malloc, which the caller goes on filling. A p shorter
	// than NocopyThreshold is copied.
	WriteDirect(p []byte, remainCap int) error
	// Append moves all readable bytes of w (a *LinkBuffer) to the end of this
	// buffer without copying them; w is left empty.
	Append(w Writer) error
	// Flush publishes the bytes written so far to the reader side.
	Flush() error
}

// LinkBuffer is a linked list of pooled memory blocks with a nocopy Reader and
// Writer. The zero value is an empty buffer ready to use. See the package
// comment for the rules of concurrent use.
type LinkBuffer struct {
	length atomic.Int64 // published, unread bytes

	// first is the first node of the list, published by the writer when it
	// starts a list from empty; the reader takes it up when it finds read nil.
	first atomic.Pointer[node]

	// Reader side.
	head *node    // oldest node not yet released
	read *node    // node the next read starts in
	held *node    // blocks allocated for reads that span nodes, freed at Release
	span spanCopy // the last Peek that spanned nodes, which a longer one extends

	// Writer side.
	write     *node // last node
	flush     *node // first node holding unpublished bytes
	unflushed int   // bytes written since the last Flush
	spare     *node // memory booked by Book and not yet linked
	bookSize  int   // size of the next block Book takes
	// booked is the room the last Book handed out, 0 once BookAck took it;
	// bookAt and bookW are the last node and its write offset then: a
	// write since moves them, and the booking is void.
	booked int
	bookAt *node
	bookW  int

	sliced bool // made by Slice: no writer adds to it
}

// NewLinkBuffer returns an empty buffer.
func NewLinkBuffer() *LinkBuffer { return &LinkBuffer{} }

// NewLinkBufferFrom returns a buffer whose readable content is p, linked by
// reference. p must not change until the buffer is released.
func NewLinkBufferFrom(p []byte) *LinkBuffer {
	b := &LinkBuffer{}
	if len(p) > 0 {
		n := newView(p, nil)
		n.readonly = true
		n.w = len(p)
		b.link(n)
		b.unflushed = len(p)
		b.Flush()
	}
	return b
}

// Len returns the number of readable (flushed, unread) bytes.
func (b *LinkBuffer) Len() int { return int(b.length.Load()) }

// ---------------------------------------------------------------- writer side

// link appends n to the list as the new last node.
func (b *LinkBuffer) link(n *node) {
	if b.write == nil {
		b.write, b.flush = n, n
		b.first.Store(n)
		return
	}
	b.write.next.Store(n)
	b.write = n
}

// grow appends an owning node with room for at least size bytes.
func (b *LinkBuffer) grow(size int) *node {
	if size < defaultNodeSize {
		size = defaultNodeSize
	}
	n := newNode(size)
	if w := b.write; w != nil && w.w == int(w.end.Load()) && b.flush == w {
		// The old last node has nothing unpublished: new bytes start here.
		b.write.next.Store(n)
		b.write, b.flush = n, n
		return n
	}
	b.link(n)
	return n
}

// maxMalloc is the largest Malloc: 512 GiB, below the largest allocation Go
// makes on any 64-bit platform (1 TiB on ios/arm64), so that a size no heap can
// hold is an error instead of a panic in make.
const maxMalloc = 1 << 39

// Malloc returns n writable bytes at the end of the buffer. They become
// readable at the next Flush. A negative n or one above 512 GiB is an error.
func (b *LinkBuffer) Malloc(n int) ([]byte, error) {
	if uint64(n) > maxMalloc { // one compare catches both negative and huge n
		if n < 0 {
			return nil, negative("Malloc", n)
		}
		return nil, fmt.Errorf("buf: Malloc(%d) is above the largest allocation, %d bytes", n, uint64(maxMalloc))
	}
	t := b.write
	if t == nil || t.readonly || len(t.buf)-t.w < n {
		t = b.grow(n)
	}
	p := t.buf[t.w : t.w+n : t.w+n]
	t.w += n
	b.unflushed += n
	return p, nil
}

// MallocLen returns the number of bytes written since the last Flush.
func (b *LinkBuffer) MallocLen() int { return b.unflushed }

// MallocAck keeps the first n bytes written since the last Flush and drops the
// rest.
func (b *LinkBuffer) MallocAck(n int) error {
	if n < 0 || n > b.unflushed {
		return fmt.Errorf("buf: MallocAck(%d) with %d bytes written since Flush", n, b.unflushed)
	}
	if n == b.unflushed {
		return nil
	}
	keep := n
	t := b.flush
	for {
		pending := t.w - int(t.end.Load())
		if keep <= pending || t.next.Load() == nil {
			t.w -= pending - keep
			break
		}
		keep -= pending
		t = t.next.Load()
	}
	// Drop the nodes after t.
	for d := t.next.Load(); d != nil; {
		nx := d.next.Load()
		d.free()
		d = nx
	}
	t.next.Store(nil)
	b.write = t
	b.unflushed = n
	return nil
}

// WriteByte appends one byte.
func (b *LinkBuffer) WriteByte(c byte) error {
	p, _ := b.Malloc(1)
	p[0] = c
	return nil
}

// WriteBinary appends p. From NocopyThreshold bytes on, p is linked by
// reference and must not change until it has been written out or the reader
// has released it (bytes read with Next, Peek or Until still point at it).
func (b *LinkBuffer) WriteBinary(p []byte) (int, error) {
	if len(p) >= NocopyThreshold {
		b.insertLent(p, 0)
		return len(p), nil
	}
	d, _ := b.Malloc(len(p))
	copy(d, p)
	return len(p), nil
}

// WriteString appends s. From NocopyThreshold bytes on, s is linked by
// reference, so the bytes a reader gets from Next, Peek or Until are s's own
// and must not be written to.
func (b *LinkBuffer) WriteString(s string) (int, error) {
	if len(s) >= NocopyThreshold {
		b.insertLent(stringBytes(s), 0)
		return len(s), nil
	}
	d, _ := b.Malloc(len(s))
	copy(d, s)
	return len(s), nil
}

// WriteDirect links p into the buffer in front of the last remainCap bytes of
// the most recent Malloc: the last node is split there, p goes between the two
// parts, and the caller goes on filling the remainCap bytes, which now follow p.
//
// A p shorter than NocopyThreshold is copied (into memory of its own, linked
// the same way), as WriteBinary would copy it: so the buffer holds none of
// its writers' memory in fewer than NocopyThreshold bytes written, and a
// writer who wrote fewer than that since a point knows that nothing it
// wrote since then needs to stay unchanged until sent.
func (b *LinkBuffer) WriteDirect(p []byte, remainCap int) error {
	t := b.write
	if remainCap < 0 || t == nil || t.readonly || remainCap > t.w-int(t.end.Load()) {
		return fmt.Errorf("buf: WriteDirect remainCap %d outside the last Malloc", remainCap)
	}
	if len(p) < NocopyThreshold {
		p = append([]byte(nil), p...)
	}
	b.insertLent(p, remainCap)
	return nil
}

// insertLent links the caller's p after the written part of the last node. The
// last tail bytes of that node (already handed out by Malloc) and its free room
// move behind p in a view of the same memory, so no memory is wasted.
func (b *LinkBuffer) insertLent(p []byte, tail int) {
	if len(p) == 0 {
		return
	}
	lent := newView(p, nil)
	lent.readonly = true
	lent.w = len(p)
	t := b.write
	if t == nil || t.readonly || (tail == 0 && len(t.buf)-t.w < 512) {
		// Nothing worth keeping behind p.
		b.link(lent)
		b.unflushed += len(p)
		return
	}
	split := t.w - tail
	rest := newView(t.buf[split:], t.root())
	rest.w = tail
	t.w = split
	t.readonly = true
	t.next.Store(lent)
	lent.next.Store(rest)
	b.write = rest
	b.unflushed += len(p)
}

// Append moves the readable bytes of w, which must be a *LinkBuffer, to the end
// of this buffer without copying them, as unflushed bytes; w is left empty and
// released.
func (b *LinkBuffer) Append(w Writer) error {
	o, ok := w.(*LinkBuffer)
	if !ok {
		return fmt.Errorf("buf: Append of %T; want *LinkBuffer", w)
	}
	if o == nil {
		return errors.New("buf: Append of a nil *LinkBuffer")
	}
	if o == b {
		return errors.New("buf: Append of a buffer to itself")
	}
	if err := o.Flush(); err != nil {
		return err
	}
	n := o.Len()
	if n > 0 {
		s, _ := o.slice(n)
		// Move s's nodes, which are private views, onto our list.
		for v := s.first.Load(); v != nil; {
			nx := v.next.Load()
			v.next.Store(nil)
			v.w = int(v.end.Load())
			v.end.Store(0)
			b.link(v)
			v = nx
		}
		b.unflushed += n
	}
	return o.Release()
}

// Flush publishes the bytes written since the last Flush to the reader side.
func (b *LinkBuffer) Flush() error {
	if b.unflushed == 0 {
		return nil
	}
	for t := b.flush; ; t = t.next.Load() {
		t.end.Store(int64(t.w))
		if t == b.write {
			break
		}
	}
	b.flush = b.write
	b.length.Add(int64(b.unflushed))
	b.unflushed = 0
	return nil
}

// Book returns writable memory at the end of the buffer for a read system
// call: the free room of the last node, if any, and a fresh block of an
// adaptive size (at least min bytes) that is linked only if it gets used. The
// segments are appended to iov. BookAck reports how much was written.
func (b *LinkBuffer) Book(min int, iov [][]byte) [][]byte {
	b.booked, b.bookAt, b.bookW = 0, b.write, 0
	if t := b.write; t != nil {
		b.bookW = t.w
		if !t.readonly && t.w < len(t.buf) {
			iov = append(iov, t.buf[t.w:])
			b.booked = len(t.buf) - t.w
		}
	}
	if b.bookSize < minBookSize {
		b.bookSize = minBookSize
	}
	size := b.bookSize
	if size < min {
		size = min
	}
	if b.spare == nil || len(b.spare.buf) < size {
		if b.spare != nil {
			b.spare.free()
		}
		b.spare = newNode(size)
	}
	b.booked += len(b.spare.buf)
	return append(iov, b.spare.buf)
}

// BookAck records that n bytes were written into the segments of the last
// Book, in order. They become readable at the next Flush. A negative n, one
// above the room the last Book handed out, and one with no Book since the
// last BookAck or since a write (the room handed out has moved) are errors
// and record nothing: the bytes would be what the pooled memory last held.
func (b *LinkBuffer) BookAck(n int) error {
	if n <= 0 {
		if n < 0 {
			return negative("BookAck", n)
		}
		return nil
	}
	t := b.write
	if b.booked == 0 || t != b.bookAt || (t != nil && t.w != b.bookW) {
		return fmt.Errorf("buf: BookAck(%d) with nothing booked (no Book since the last BookAck or write)", n)
	}
	if n > b.booked {
		return fmt.Errorf("buf: BookAck(%d) with %d bytes booked", n, b.booked)
	}
	b.booked = 0
	room := 0
	if t != nil && !t.readonly {
		room = len(t.buf) - t.w
	}
	b.unflushed += n
	if room > 0 {
		if n <= room {
			t.w += n
			return nil
		}
		t.w = len(t.buf)
		n -= room
	}
	s := b.spare
	b.spare = nil
	s.w = n
	// Grow the next booking when reads fill whole blocks; shrink it when they
	// use a small part.
	switch {
	case n == len(s.buf) && b.bookSize < maxBookSize:
		b.bookSize *= 2
	case n < len(s.buf)/4 && b.bookSize > minBookSize:
		b.bookSize /= 2
	}
	if w := b.write; w != nil && b.flush == w && w.w == int(w.end.Load()) {
		w.next.Store(s)
		b.write, b.flush = s, s
		return nil
	}
	b.link(s)
	return nil
}

// ---------------------------------------------------------------- reader side

// readNode returns the node holding the next unread byte. The caller has seen
// Len() > 0, so that node exists and is published.
func (b *LinkBuffer) readNode() *node {
	r := b.read
	if r == nil {
		r = b.first.Load()
		b.read, b.head = r, r
	}
	for r.off >= int(r.end.Load()) {
		nx := r.next.Load()
		if nx == nil {
			break
		}
		r = nx
	}
	b.read = r
	return r
}

// Next returns the next n bytes and advances past them. The slice points into
// the buffer (or, when the bytes span nodes, into a block the buffer holds) and
// stays valid until Release.
func (b *LinkBuffer) Next(n int) ([]byte, error) {
	if n <= 0 {
		if n < 0 {
			return nil, negative("Next", n)
		}
		return nil, nil
	}
	if l := b.length.Load(); int64(n) > l {
		return nil, notEnough("Next", n, l)
	}
	r := b.readNode()
	if int(r.end.Load())-r.off >= n {
		p := r.buf[r.off : r.off+n : r.off+n]
		r.off += n
		b.length.Add(int64(-n))
		return p, nil
	}
	if b.span.at(r) && n <= len(b.span.blk.buf) {
		// A Peek that spanned nodes copied (some of) these bytes already.
		p := b.spanned(n)
		b.span = spanCopy{}
		b.advance(n)
		b.length.Add(int64(-n))
		return p, nil
	}
	p := b.holdBlock(n)
	b.copyOut(p, true)
	b.length.Add(int64(-n))
	return p, nil
}

// Peek returns the next n bytes without advancing. When they span nodes they
// are copied into a block held until Release; a later Peek of more bytes at
// the same position (a reader walking a message as it arrives) copies only
// the bytes it adds, so peeking growing prefixes of m bytes copies O(m) bytes
// in all, and a Next at that position takes the copy without copying again.
func (b *LinkBuffer) Peek(n int) ([]byte, error) {
	if n <= 0 {
		if n < 0 {
			return nil, negative("Peek", n)
		}
		return nil, nil
	}
	if l := b.length.Load(); int64(n) > l {
		return nil, notEnough("Peek", n, l)
	}
	r := b.readNode()
	if int(r.end.Load())-r.off >= n {
		return r.buf[r.off : r.off+n : r.off+n], nil
	}
	return b.spanned(n), nil
}

// spanCopy is the copy made by the last Peek that spanned nodes: blk (a held
// block) holds the n readable bytes from position (from, fromOff), which end
// at position (to, toOff). Positions stay meaningful until Release, which
// frees the nodes they name and clears the copy.
type spanCopy struct {
	blk            *node
	n              int
	from, to       *node
	fromOff, toOff int
}

// at reports whether the copy starts at the read position r (from readNode).
func (c *spanCopy) at(r *node) bool {
	return c.blk != nil && c.from == r && c.fromOff == r.off
}

// spanned returns the next n readable bytes (n > 0, readable, readNode called)
// in a held block without advancing: the span copy, extended by the bytes it
// lacks, or moved to a block at least twice as large when it is too small
// (so growing peeks copy each byte a bounded number of times and hold blocks
// of at most four times their final size), or started afresh when the read
// position moved.
func (b *LinkBuffer) spanned(n int) []byte {
	c := &b.span
	r := b.read
	if !c.at(r) {
		*c = spanCopy{blk: b.holdNode(n), from: r, fromOff: r.off, to: r, toOff: r.off}
	} else if n > len(c.blk.buf) {
		blk := b.holdNode(max(n, 2*len(c.blk.buf)))
		copy(blk.buf, c.blk.buf[:c.n])
		c.blk = blk
	}
	if n > c.n {
		c.to, c.toOff = copyFrom(c.blk.buf[c.n:n], c.to, c.toOff)
		c.n = n
	}
	return c.blk.buf[:n:n]
}

// copyFrom copies len(p) readable bytes starting at offset off of node t into
// p and returns the position just after them.
func copyFrom(p []byte, t *node, off int) (*node, int) {
	for done := 0; ; {
		k := copy(p[done:], t.buf[off:t.end.Load()])
		done += k
		off += k
		if done == len(p) {
			return t, off
		}
		t = t.next.Load()
		off = t.off
	}
}

// Skip advances past the next n bytes.
func (b *LinkBuffer) Skip(n int) error {
	if n <= 0 {
		if n < 0 {
			return negative("Skip", n)
		}
		return nil
	}
	if l := b.length.Load(); int64(n) > l {
		return notEnough("Skip", n, l)
	}
	b.readNode()
	b.advance(n)
	b.length.Add(int64(-n))
	return nil
}

// advance moves the read position past n readable bytes; the caller has
// called readNode and updates length.
func (b *LinkBuffer) advance(n int) {
	left := n
	r := b.read
	for {
		k := int(r.end.Load()) - r.off
		if k >= left {
			r.off += left
			break
		}
		r.off += k
		left -= k
		r = r.next.Load()
	}
	b.read = r
}

// ReadByte returns the next byte.
func (b *LinkBuffer) ReadByte() (byte, error) {
	if b.length.Load() < 1 {
		return 0, notEnough("ReadByte", 1, 0)
	}
	r := b.readNode()
	c := r.buf[r.off]
	r.off++
	b.length.Add(-1)
	return c, nil
}

// ReadBinary returns a copy of the next n bytes.
func (b *LinkBuffer) ReadBinary(n int) ([]byte, error) {
	if n < 0 {
		return nil, negative("ReadBinary", n)
	}
	if l := b.length.Load(); int64(n) > l {
		return nil, notEnough("ReadBinary", n, l)
	}
	p := make([]byte, n)
	if n > 0 {
		b.readNode()
		b.copyOut(p, true)
		b.length.Add(int64(-n))
	}
	return p, nil
}

// ReadString returns a copy of the next n bytes as a string.
func (b *LinkBuffer) ReadString(n int) (string, error) {
	if n < 0 {
		return "", negative("ReadString", n)
	}
	if l := b.length.Load(); int64(n) > l {
		return "", notEnough("ReadString", n, l)
	}
	if n == 0 {
		return "", nil
	}
	r := b.readNode()
	if int(r.end.Load())-r.off >= n {
		s := string(r.buf[r.off : r.off+n])
		r.off += n
		b.length.Add(int64(-n))
		return s, nil
	}
	p, _ := b.ReadBinary(n)
	return string(p), nil
}

// Until returns the bytes up to and including the first delim and advances past
// them. Without a delim in the readable bytes it returns ErrDelimNotFound and
// reads nothing.
func (b *LinkBuffer) Until(delim byte) ([]byte, error) {
	i := b.IndexByte(delim, 0)
	if i < 0 {
		return nil, ErrDelimNotFound
	}
	return b.Next(i + 1)
}

// IndexByte returns the offset in the readable bytes of the first delim at
// or after offset from, or -1 if there is none. A reader waiting for a
// delimiter passes the length it searched already, and so reads each byte
// once however many reads the input takes to arrive.
func (b *LinkBuffer) IndexByte(delim byte, from int) int {
	l := b.length.Load()
	if l == 0 || int64(from) >= l {
		return -1
	}
	from = max(from, 0)
	seen := 0
	for t := b.readNode(); t != nil && int64(seen) < l; t = t.next.Load() {
		seg := t.buf[t.off:t.end.Load()]
		if int64(seen+len(seg)) > l {
			seg = seg[:l-int64(seen)]
		}
		if skip := from - seen; skip < len(seg) {
			skip = max(skip, 0)
			if i := bytes.IndexByte(seg[skip:], delim); i >= 0 {
				return seen + skip + i
			}
		}
		seen += len(seg)
	}
	return -1
}

// Slice returns the next n bytes as a new buffer that shares this buffer's
// memory (each block stays alive until both have released it) and advances
// past them.
func (b *LinkBuffer) Slice(n int) (Reader, error) {
	s, err := b.slice(n)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (b *LinkBuffer) slice(n int) (*LinkBuffer, error) {
	if n < 0 {
		return nil, negative("Slice", n)
	}
	if l := b.length.Load(); int64(n) > l {
		return nil, notEnough("Slice", n, l)
	}
	s := &LinkBuffer{sliced: true}
	if n == 0 {
		return s, nil
	}
	left := n
	r := b.readNode()
	for {
		k := int(r.end.Load()) - r.off
		if k > left {
			k = left
		}
		if k > 0 {
			v := newView(r.buf[r.off:r.off+k:r.off+k], r.root())
			v.readonly = true
			v.w = k
			s.link(v)
			r.off += k
			left -= k
		}
		if left == 0 {
			break
		}
		r = r.next.Load()
	}
	b.read = r
	b.length.Add(int64(-n))
	s.unflushed = n
	s.Flush()
	return s, nil
}

// Release gives back the memory of everything read so far. Slices returned by
// Next, Peek and Until must not be used after it.
func (b *LinkBuffer) Release() error {
	for h := b.held; h != nil; {
		nx := h.heldNext
		h.heldNext = nil
		h.free()
		h = nx
	}
	b.held = nil
	b.span = spanCopy{}
	r := b.read
	if r == nil {
		return nil
	}
	for b.head != r {
		h := b.head
		b.head = h.next.Load()
		h.free()
	}
	if b.sliced && b.length.Load() == 0 && b.unflushed == 0 {
		// A slice read to its end: no writer keeps its last node for more
		// bytes, so that node's reference goes too.
		for h := r; h != nil; {
			nx := h.next.Load()
			h.free()
			h = nx
		}
		b.first.Store(nil)
		b.head, b.read, b.write, b.flush = nil, nil, nil, nil
	}
	return nil
}

// Reset frees every node and leaves the buffer empty, dropping unread and
// unflushed bytes. Neither side may be in use while it runs.
func (b *LinkBuffer) Reset() {
	b.Release()
	h := b.head
	if h == nil {
		h = b.first.Load()
	}
	for h != nil {
		nx := h.next.Load()
		h.free()
		h = nx
	}
	if b.spare != nil {
		b.spare.free()
	}
	b.length.Store(0)
	b.first.Store(nil)
	b.head, b.read, b.held = nil, nil, nil
	b.write, b.flush, b.spare = nil, nil, nil
	b.unflushed = 0
	b.booked, b.bookAt = 0, nil
}

// IsEmpty reports whether the buffer holds no nodes at all (no memory).
func (b *LinkBuffer) IsEmpty() bool {
	return b.write == nil && b.spare == nil && b.held == nil
}

// Segments appends to dst up to max readable segments, in order, without
// consuming them; a writer of the buffer's content to a socket passes them to
// writev and then Skips what was written.
func (b *LinkBuffer) Segments(dst [][]byte, max int) [][]byte {
	l := b.length.Load()
	if l == 0 {
		return dst
	}
	seen := int64(0)
	for t := b.readNode(); t != nil && seen < l && max > 0; t = t.next.Load() {
		seg := t.buf[t.off:t.end.Load()]
		if len(seg) == 0 {
			continue
		}
		if seen+int64(len(seg)) > l {
			seg = seg[:l-seen]
		}
		dst = append(dst, seg)
		seen += int64(len(seg))
		max--
	}
	return dst
}

// holdBlock returns n bytes of pooled memory that stays valid until Release.
func (b *LinkBuffer) holdBlock(n int) []byte {
	return b.holdNode(n).buf[:n:n]
}

// holdNode returns a block of at least n bytes that stays valid until Release.
func (b *LinkBuffer) holdNode(n int) *node {
	h := newNode(n)
	h.heldNext = b.held
	b.held = h
	return h
}

// copyOut copies len(p) readable bytes into p, advancing the read position when
// advance is set. The caller has checked that enough bytes are readable and
// called readNode.
func (b *LinkBuffer) copyOut(p []byte, advance bool) {
	r := b.read
	off := r.off
	for done := 0; ; {
		k := copy(p[done:], r.buf[off:r.end.Load()])
		done += k
		if advance {
			r.off = off + k
		}
		if done == len(p) {
			break
		}
		r = r.next.Load()
		off = r.off
	}
	if advance {
		b.read = r
	}
}
