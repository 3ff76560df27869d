package buf_test

import (
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
)

// TestMallocHugeIsAnError: a size no memory can hold (a length read from a
// corrupt frame, say) is refused with an error naming it instead of
// panicking in make.
func TestMallocHugeIsAnError(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("every int is a size a 32-bit heap may be asked for")
	}
	for _, n := range []int{math.MaxInt>>1 + 1, math.MaxInt, math.MinInt, -1} {
		b := buf.NewLinkBuffer()
		var (
			p   []byte
			err error
		)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("Malloc(%d) panicked: %v", n, r)
				}
			}()
			p, err = b.Malloc(n)
		}()
		if err == nil || p != nil || !strings.Contains(err.Error(), "Malloc(") {
			t.Fatalf("Malloc(%d) = %d bytes, %v; want an error naming the call", n, len(p), err)
		}
		if b.MallocLen() != 0 {
			t.Fatalf("Malloc(%d) failed but MallocLen is %d", n, b.MallocLen())
		}
	}
}

// overReader claims to have read more bytes than it was given room for.
type overReader struct{ calls int }

func (r *overReader) Read(p []byte) (int, error) {
	r.calls++
	if r.calls > 1 {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'r'
	}
	return len(p) + 100, nil
}

// negReader returns a negative count, then EOF.
type negReader struct{ calls int }

func (r *negReader) Read(p []byte) (int, error) {
	r.calls++
	if r.calls > 1 {
		return 0, io.EOF
	}
	return -1, nil
}

// TestReadFromBrokenReader: a Read count outside [0, len(p)] must not be
// taken as data (it published bytes nobody wrote: stale memory of a pooled
// block, or an end past the block that made a later Next panic).
func TestReadFromBrokenReader(t *testing.T) {
	for _, lead := range []int{0, 10} {
		b := buf.NewLinkBuffer()
		if lead > 0 {
			b.WriteString(strings.Repeat("w", lead))
			b.Flush()
		}
		var (
			n   int64
			err error
		)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("lead %d: ReadFrom panicked: %v", lead, r)
				}
			}()
			n, err = b.ReadFrom(&overReader{})
		}()
		if err == nil || !strings.Contains(err.Error(), "Read") {
			t.Fatalf("lead %d: ReadFrom of a reader claiming len(p)+100 bytes = %d, %v; want an error", lead, n, err)
		}
		if b.Len() != lead+int(n) {
			t.Fatalf("lead %d: Len %d after ReadFrom returned %d", lead, b.Len(), n)
		}
		got, _ := b.Next(b.Len())
		if strings.Trim(string(got), "wr") != "" {
			t.Fatalf("lead %d: buffer holds bytes the reader never wrote: %q", lead, got)
		}
		b.Release()
		b.Reset()
	}
	b := buf.NewLinkBuffer()
	if n, err := b.ReadFrom(&negReader{}); err == nil || n != 0 || b.Len() != 0 {
		t.Fatalf("ReadFrom of a reader returning -1 = %d, %v, Len %d; want an error", n, err, b.Len())
	}
	b.Reset()
}

// overWriter claims to have written more than it was given.
type overWriter struct{ got []byte }

func (w *overWriter) Write(p []byte) (int, error) {
	w.got = append(w.got, p...)
	return len(p) + 1, nil
}

// TestWriteToBrokenWriter: a Write count above len(p) must not skip bytes
// that were never written, nor be added to the total.
func TestWriteToBrokenWriter(t *testing.T) {
	b := buf.NewLinkBuffer()
	b.WriteString("abc")
	b.Flush()
	b.WriteString("defgh") // not flushed yet: a second segment after Flush
	b.Flush()
	w := &overWriter{}
	n, err := b.WriteTo(w)
	if err == nil || n > int64(len(w.got)) {
		t.Fatalf("WriteTo of a writer claiming len(p)+1 = %d, %v (it took %d bytes); want an error and a count it took", n, err, len(w.got))
	}
}

// stuckReader returns data once, then (0, nil) forever.
type stuckReader struct{ calls int }

func (r *stuckReader) Read(p []byte) (int, error) {
	r.calls++
	if r.calls == 1 {
		return copy(p, "abc"), nil
	}
	return 0, nil
}

// TestReadFromNoProgress: a reader that keeps returning (0, nil) must end
// ReadFrom with io.ErrNoProgress (as bufio does), keeping what it read
// before, instead of looping for ever.
func TestReadFromNoProgress(t *testing.T) {
	b := buf.NewLinkBuffer()
	defer b.Reset()
	r := &stuckReader{}
	done := make(chan struct{})
	var (
		n   int64
		err error
	)
	go func() {
		defer close(done)
		n, err = b.ReadFrom(r)
	}()
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatal("ReadFrom of a reader returning (0, nil) for ever did not return within 2s")
	}
	if !errors.Is(err, io.ErrNoProgress) || n != 3 || b.Len() != 3 {
		t.Fatalf("ReadFrom = %d, %v, Len %d; want 3, io.ErrNoProgress, 3", n, err, b.Len())
	}
	if r.calls > 200 {
		t.Fatalf("ReadFrom called Read %d times before giving up", r.calls)
	}
}
