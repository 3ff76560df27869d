package buf

import (
	"errors"
	"fmt"
	"io"
)

// Read implements io.Reader: it copies up to len(p) readable bytes into p. It
// returns io.EOF when the buffer is empty.
func (b *LinkBuffer) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l := b.Len()
	if l == 0 {
		return 0, io.EOF
	}
	n := min(len(p), l)
	b.readNode()
	b.copyOut(p[:n], true)
	b.length.Add(int64(-n))
	return n, nil
}

// Write implements io.Writer: it appends a copy of p and flushes it, so the
// bytes are readable when Write returns.
func (b *LinkBuffer) Write(p []byte) (int, error) {
	d, _ := b.Malloc(len(p))
	copy(d, p)
	return len(p), b.Flush()
}

// WriteTo implements io.WriterTo: it writes the readable bytes to w, consuming
// what w accepted, and releases them.
func (b *LinkBuffer) WriteTo(w io.Writer) (int64, error) {
	var total int64
	var segs [][]byte
	for b.Len() > 0 {
		segs = b.Segments(segs[:0], 16)
		for _, s := range segs {
			n, err := w.Write(s)
			if n < 0 || n > len(s) {
				b.Release()
				return total, fmt.Errorf("buf: WriteTo: %T.Write returned %d for %d bytes", w, n, len(s))
			}
			total += int64(n)
			if skipErr := b.Skip(n); skipErr != nil {
				return total, skipErr
			}
			if err != nil {
				b.Release()
				return total, err
			}
			if n < len(s) {
				b.Release()
				return total, io.ErrShortWrite
			}
		}
	}
	return total, b.Release()
}

// ReadFrom implements io.ReaderFrom: it reads from r into the buffer until EOF,
// flushing as it goes. A reader that returns no bytes and no error
// maxEmptyReads times in a row ends it with io.ErrNoProgress, as bufio does.
func (b *LinkBuffer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	var iov [][]byte
	empty := 0
	for {
		iov = b.Book(minBookSize, iov[:0])
		// The first segment is filled first, as BookAck expects.
		n, err := r.Read(iov[0])
		if n < 0 || n > len(iov[0]) {
			return total, fmt.Errorf("buf: ReadFrom: %T.Read returned %d for a %d-byte buffer", r, n, len(iov[0]))
		}
		if n > 0 {
			b.BookAck(n)
			b.Flush()
			total += int64(n)
			empty = 0
		} else if err == nil {
			if empty++; empty == maxEmptyReads {
				return total, io.ErrNoProgress
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return total, nil
			}
			return total, err
		}
	}
}

// maxEmptyReads is how many (0, nil) reads in a row ReadFrom takes.
const maxEmptyReads = 100

// Bytes returns a copy of the readable bytes without consuming them.
func (b *LinkBuffer) Bytes() []byte {
	n := b.Len()
	p := make([]byte, n)
	if n > 0 {
		b.readNode()
		b.copyOut(p, false)
	}
	return p
}
