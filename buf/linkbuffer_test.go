package buf_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
)

func TestWriterInvisibleUntilFlush(t *testing.T) {
	b := buf.NewLinkBuffer()
	p, _ := b.Malloc(3)
	copy(p, "abc")
	if b.Len() != 0 || b.MallocLen() != 3 {
		t.Fatalf("before Flush: Len %d MallocLen %d", b.Len(), b.MallocLen())
	}
	if _, err := b.Next(1); !errors.Is(err, buf.ErrNotEnough) {
		t.Fatalf("Next before Flush: %v, want ErrNotEnough", err)
	}
	b.Flush()
	got, err := b.Next(3)
	if err != nil || string(got) != "abc" {
		t.Fatalf("Next = %q, %v", got, err)
	}
}

func TestLargeWriteBinaryIsLinkedNotCopied(t *testing.T) {
	b := buf.NewLinkBuffer()
	b.WriteString("head")
	big := bytes.Repeat([]byte{'x'}, buf.NocopyThreshold)
	b.WriteBinary(big)
	b.WriteString("tail")
	b.Flush()
	head, _ := b.Next(4)
	body, _ := b.Next(len(big))
	tail, _ := b.Next(4)
	if string(head) != "head" || string(tail) != "tail" {
		t.Fatalf("head %q tail %q", head, tail)
	}
	if &body[0] != &big[0] {
		t.Fatal("a WriteBinary above the threshold was copied, not linked")
	}
	// The tail went into the memory left after "head" in the split node.
	if cap(head) != 4 {
		t.Fatalf("Next handed out a slice with spare capacity %d", cap(head))
	}
}

func TestWriteDirectSplitsTheMalloc(t *testing.T) {
	b := buf.NewLinkBuffer()
	p, _ := b.Malloc(10)
	copy(p, "0123")
	if err := b.WriteDirect([]byte("DIRECT"), 6); err != nil {
		t.Fatal(err)
	}
	copy(p[4:], "456789")
	b.Flush()
	if got := string(b.Bytes()); got != "0123DIRECT456789" {
		t.Fatalf("content %q", got)
	}
	if err := b.WriteDirect([]byte("x"), 100); err == nil {
		t.Fatal("WriteDirect with remainCap beyond the last Malloc: no error")
	}
}

func TestSliceOutlivesParentRelease(t *testing.T) {
	b := buf.NewLinkBuffer()
	b.WriteString(strings.Repeat("a", 5000) + "bbbb")
	b.Flush()
	s, err := b.Slice(5000)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	rest, _ := b.Next(4)
	if string(rest) != "bbbb" {
		t.Fatalf("parent after Slice: %q", rest)
	}
	b.Release()
	b.Reset()
	got, err := s.Next(5000)
	if err != nil || strings.Count(string(got), "a") != 5000 {
		t.Fatalf("slice after parent reset: %d bytes, %v", len(got), err)
	}
	s.Release()
}

func TestAppendMovesWithoutCopy(t *testing.T) {
	a, b := buf.NewLinkBuffer(), buf.NewLinkBuffer()
	a.WriteString("first-")
	b.WriteString("second")
	if err := a.Append(b); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 {
		t.Fatalf("appended buffer still holds %d bytes", b.Len())
	}
	a.Flush()
	if got := string(a.Bytes()); got != "first-second" {
		t.Fatalf("content %q", got)
	}
	if err := a.Append(a); err == nil {
		t.Fatal("Append to itself: no error")
	}
}

func TestErrorsSayWhatHappened(t *testing.T) {
	b := buf.NewLinkBuffer()
	b.WriteString("ab")
	b.Flush()
	_, err := b.Next(5)
	if err == nil || !strings.Contains(err.Error(), "needs 5 bytes, 2 readable") {
		t.Fatalf("Next(5): %v", err)
	}
	if _, err := b.Next(-1); !errors.Is(err, buf.ErrNegativeSize) {
		t.Fatalf("Next(-1): %v", err)
	}
	if _, err := b.Until('z'); !errors.Is(err, buf.ErrDelimNotFound) {
		t.Fatalf("Until: %v", err)
	}
	if err := b.MallocAck(3); err == nil {
		t.Fatal("MallocAck beyond MallocLen: no error")
	}
}

func TestIOAdapters(t *testing.T) {
	src := strings.Repeat("0123456789", 3000)
	b := buf.NewLinkBuffer()
	if n, err := b.ReadFrom(strings.NewReader(src)); err != nil || n != int64(len(src)) {
		t.Fatalf("ReadFrom: %d, %v", n, err)
	}
	var out bytes.Buffer
	if n, err := b.WriteTo(&out); err != nil || n != int64(len(src)) || out.String() != src {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	b.Write([]byte("hello"))
	p := make([]byte, 3)
	if n, _ := b.Read(p); n != 3 || string(p) != "hel" {
		t.Fatalf("Read: %q", p[:n])
	}
	rest, _ := io.ReadAll(b)
	if string(rest) != "lo" {
		t.Fatalf("ReadAll: %q", rest)
	}
	b.Release()
	b.Reset()
	if !b.IsEmpty() {
		t.Fatal("Reset left memory")
	}
}

func TestLargeMessagesUseLargeBlocks(t *testing.T) {
	for _, size := range []int{1, 1000, 70 << 10, 3 << 20, 80 << 20} {
		b := buf.NewLinkBuffer()
		p, _ := b.Malloc(size)
		p[len(p)-1] = 7
		b.Flush()
		got, _ := b.Next(size)
		if len(got) != size || got[size-1] != 7 {
			t.Fatalf("size %d: got %d bytes", size, len(got))
		}
		b.Release()
		b.Reset()
	}
}

// TestConcurrentProducerConsumer runs a writer and a reader on two goroutines,
// as a poller and a handler do; run it with -race.
func TestConcurrentProducerConsumer(t *testing.T) {
	b := buf.NewLinkBuffer()
	const total = 1 << 20
	done := make(chan error, 1)
	go func() {
		var want byte
		for got := 0; got < total; {
			n := b.Len()
			if n == 0 {
				continue
			}
			n = min(n, 777)
			p, err := b.Next(n)
			if err != nil {
				done <- err
				return
			}
			for _, c := range p {
				if c != want {
					done <- fmt.Errorf("byte %d = %d, want %d", got, c, want)
					return
				}
				want++
			}
			got += n
			b.Release()
		}
		done <- nil
	}()
	writeCounting(b, total, 1500)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// totalAlloc returns the bytes allocated so far by the whole process.
func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// TestGrowingPeeksCopyOnce peeks the whole readable content each time a
// piece arrives, as a reader that walks a message still arriving does. The
// bytes span many nodes, so each Peek returns a copy; a longer Peek copies
// only what it adds, earlier Peeks stay valid, and the Next that takes the
// message returns that copy. Copying the prefix again on each Peek
// allocated 45 MiB for this 256 KiB message (178 times its size), each copy
// held until Release.
func TestGrowingPeeksCopyOnce(t *testing.T) {
	const size, piece = 256 << 10, 1000
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	b := buf.NewLinkBuffer()
	defer b.Reset()
	var views [][]byte
	before := totalAlloc()
	for sent := 0; sent < size; {
		k := min(piece, size-sent)
		b.Write(msg[sent : sent+k])
		sent += k
		p, err := b.Peek(sent)
		if err != nil || !bytes.Equal(p, msg[:sent]) {
			t.Fatalf("Peek(%d) after %d bytes: %v, content differs: %v", sent, sent, err, !bytes.Equal(p, msg[:sent]))
		}
		views = append(views, p)
	}
	last := views[len(views)-1]
	p, err := b.Next(size)
	if err != nil || !bytes.Equal(p, msg) {
		t.Fatalf("Next(%d): %v", size, err)
	}
	if &p[0] != &last[0] {
		t.Errorf("Next copied the bytes again instead of taking the last Peek's copy")
	}
	grown := totalAlloc() - before
	for i, v := range views {
		if !bytes.Equal(v, msg[:len(v)]) {
			t.Fatalf("Peek %d (%d bytes) changed before Release", i, len(v))
		}
	}
	if b.Len() != 0 {
		t.Fatalf("%d bytes left after Next", b.Len())
	}
	t.Logf("%d-byte message in %d-byte pieces: %d bytes allocated (%.1fx)", size, piece, grown, float64(grown)/size)
	if grown > 8*size {
		t.Fatalf("peeking growing prefixes of a %d-byte message allocated %d bytes: more than 8 times its size", size, grown)
	}
	b.Release()
}

// TestSpanCopyFollowsTheReadPosition: a spanning Peek's copy serves only
// Peeks and Nexts at the position it was made at; after a read moves on, or
// after Release, Peek copies afresh.
func TestSpanCopyFollowsTheReadPosition(t *testing.T) {
	msg := make([]byte, 20000)
	for i := range msg {
		msg[i] = byte(i % 251)
	}
	b := buf.NewLinkBuffer()
	defer b.Reset()
	for i := 0; i < len(msg); i += 3000 {
		b.Write(msg[i:min(i+3000, len(msg))])
	}
	pos := 0
	peek := func(n int) []byte {
		t.Helper()
		p, err := b.Peek(n)
		if err != nil || !bytes.Equal(p, msg[pos:pos+n]) {
			t.Fatalf("Peek(%d) at %d: %v, or wrong bytes", n, pos, err)
		}
		return p
	}
	next := func(n int) []byte {
		t.Helper()
		p, err := b.Next(n)
		if err != nil || !bytes.Equal(p, msg[pos:pos+n]) {
			t.Fatalf("Next(%d) at %d: %v, or wrong bytes", n, pos, err)
		}
		pos += n
		return p
	}
	a := peek(5000)
	if c := peek(4000); &c[0] != &a[0] {
		t.Errorf("a shorter Peek at the same position copied again")
	}
	peek(9000) // grows the copy past its block
	if _, err := b.ReadByte(); err != nil {
		t.Fatal(err)
	}
	pos++
	peek(7000)
	peek(7100)
	next(6000) // from the copy, shorter than it
	b.Skip(10)
	pos += 10
	peek(4500)
	if !bytes.Equal(a, msg[:5000]) {
		t.Fatalf("the first Peek's bytes changed before Release")
	}
	b.Release()
	peek(5000)
	next(5000)
	peek(b.Len())
	next(b.Len())
}

// TestConcurrentGrowingPeeks: a reader peeks growing prefixes while a
// writer goroutine appends, as a handler walking a message does while the
// poller fills the buffer; run it with -race.
func TestConcurrentGrowingPeeks(t *testing.T) {
	b := buf.NewLinkBuffer()
	defer b.Reset()
	const msgSize, msgs = 50000, 8
	done := make(chan error, 1)
	go func() {
		var want byte
		for range msgs {
			for n := 0; n < msgSize; {
				n = min(b.Len(), msgSize)
				p, err := b.Peek(n)
				if err != nil {
					done <- err
					return
				}
				for i, c := range p {
					if c != want+byte(i) {
						done <- fmt.Errorf("Peek(%d): byte %d = %d, want %d", n, i, c, want+byte(i))
						return
					}
				}
			}
			if _, err := b.Next(msgSize); err != nil {
				done <- err
				return
			}
			want += msgSize % 256
			b.Release()
		}
		done <- nil
	}()
	writeCounting(b, msgSize*msgs, 700)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func ExampleLinkBuffer() {
	b := buf.NewLinkBuffer()
	p, _ := b.Malloc(5)
	copy(p, "hello")
	b.WriteString(", world\n")
	b.Flush()
	line, _ := b.Until('\n')
	fmt.Printf("%q\n", line)
	b.Release()
	// Output: "hello, world\n"
}

// writeCounting writes total bytes counting 0, 1, ..., 255, 0, ... through
// Book, at most chunk at a time, flushing each.
func writeCounting(b *buf.LinkBuffer, total, chunk int) {
	var c byte
	var iov [][]byte
	for sent := 0; sent < total; {
		iov = b.Book(1, iov[:0])
		n := min(len(iov[0]), chunk, total-sent)
		for i := range n {
			iov[0][i] = c
			c++
		}
		b.BookAck(n)
		b.Flush()
		sent += n
	}
}

// TestWriteDirectCopiesShort: a slice shorter than NocopyThreshold given to
// WriteDirect is copied, so that changing it afterwards changes nothing in
// the buffer; a longer one is linked, as documented.
func TestWriteDirectCopiesShort(t *testing.T) {
	for _, n := range []int{6, buf.NocopyThreshold - 1, buf.NocopyThreshold} {
		b := buf.NewLinkBuffer()
		p, _ := b.Malloc(4)
		copy(p, "head")
		direct := []byte(strings.Repeat("d", n))
		if err := b.WriteDirect(direct, 0); err != nil {
			t.Fatal(err)
		}
		direct[0] = 'X'
		b.Flush()
		got := string(b.Bytes())
		linked := got[4] == 'X'
		if want := n >= buf.NocopyThreshold; linked != want {
			t.Errorf("%d bytes: linked %v, want %v", n, linked, want)
		}
		if len(got) != 4+n {
			t.Errorf("%d bytes: buffer of %d", n, len(got))
		}
	}
}
