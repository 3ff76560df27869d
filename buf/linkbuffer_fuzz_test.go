package buf_test

import (
	"bytes"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
)

// model is the plain byte-slice reference: what was written since the last
// flush, and what is readable.
type model struct {
	pending  []byte
	readable []byte
}

// FuzzLinkBufferModel drives random sequences of Reader and Writer operations
// against a LinkBuffer and a byte-slice model and fails on any difference.
// Slices handed out before a Release are checked again just before it, so a
// block reused too early shows up.
func FuzzLinkBufferModel(f *testing.F) {
	f.Add([]byte{0, 10, 7, 3, 1, 5, 2, 4, 3, 1, 8, 0})
	f.Add([]byte{1, 200, 7, 0, 4, 9, 9, 9, 3, 2, 7, 1, 6, 4, 5, 5})
	f.Add([]byte{10, 3, 60, 7, 11, 4, 7, 2, 9, 6, 12, 1, 7, 0, 2, 80, 8})
	f.Add(bytes.Repeat([]byte{1, 255, 0, 255, 7, 2, 3, 100}, 20))
	f.Fuzz(runModel)
}

func runModel(t *testing.T, ops []byte) {
	{
		var (
			b     = buf.NewLinkBuffer()
			m     model
			live  [][]byte // slices from Next/Peek/Until with their expected content
			want  [][]byte
			isSl  []bool // live[i] stands for the next entry of slice
			fill  byte
			slice []*buf.LinkBuffer
		)
		next := func() int {
			if len(ops) == 0 {
				return 0
			}
			v := int(ops[0])
			ops = ops[1:]
			return v
		}
		gen := func(n int) []byte {
			p := make([]byte, n)
			for i := range p {
				fill++
				p[i] = fill
			}
			return p
		}
		size := func() int {
			v := next()
			switch v % 4 {
			case 0:
				return v / 4
			case 1:
				return v * 37 // up to ~9 KB: spans nodes
			case 2:
				return buf.NocopyThreshold + v
			default:
				return v % 8
			}
		}
		check := func(op string, got, exp []byte) {
			t.Helper()
			if !bytes.Equal(got, exp) {
				t.Fatalf("%s: got % x, want % x", op, got, exp)
			}
		}
		for len(ops) > 0 {
			switch next() % 14 {
			case 0: // Malloc
				n := size()
				p, err := b.Malloc(n)
				if err != nil || len(p) != n {
					t.Fatalf("Malloc(%d) = %d bytes, %v", n, len(p), err)
				}
				copy(p, gen(n))
				m.pending = append(m.pending, p...)
			case 1: // WriteBinary (large ones are linked by reference)
				p := gen(size())
				if n, err := b.WriteBinary(p); err != nil || n != len(p) {
					t.Fatalf("WriteBinary: %d, %v", n, err)
				}
				m.pending = append(m.pending, p...)
			case 2: // WriteString
				p := gen(size())
				b.WriteString(string(p))
				m.pending = append(m.pending, p...)
			case 3: // WriteDirect inside a Malloc
				n := size() + 1
				p, _ := b.Malloc(n)
				cut := next() % n
				head := gen(cut)
				copy(p, head)
				direct := gen(size())
				if err := b.WriteDirect(direct, n-cut); err != nil {
					t.Fatalf("WriteDirect: %v", err)
				}
				tail := gen(n - cut)
				copy(p[cut:], tail)
				m.pending = append(append(append(m.pending, head...), direct...), tail...)
			case 4: // MallocAck
				if len(m.pending) > 0 {
					k := next() % (len(m.pending) + 1)
					if err := b.MallocAck(k); err != nil {
						t.Fatalf("MallocAck(%d): %v", k, err)
					}
					m.pending = m.pending[:k]
				}
			case 5: // Flush
				b.Flush()
				m.readable = append(m.readable, m.pending...)
				m.pending = nil
			case 6: // Next
				n := size()
				p, err := b.Next(n)
				if n > len(m.readable) {
					if err == nil {
						t.Fatalf("Next(%d) with %d readable: no error", n, len(m.readable))
					}
					break
				}
				check("Next", p, m.readable[:n])
				live = append(live, p)
				isSl = append(isSl, false)
				want = append(want, append([]byte(nil), p...))
				m.readable = m.readable[n:]
			case 7: // Peek
				n := size()
				p, err := b.Peek(n)
				if n > len(m.readable) {
					if err == nil {
						t.Fatalf("Peek(%d) with %d readable: no error", n, len(m.readable))
					}
					break
				}
				check("Peek", p, m.readable[:n])
				live = append(live, p)
				isSl = append(isSl, false)
				want = append(want, append([]byte(nil), p...))
			case 8: // Skip
				n := size()
				err := b.Skip(n)
				if n > len(m.readable) {
					if err == nil {
						t.Fatal("Skip past the end: no error")
					}
					break
				}
				m.readable = m.readable[n:]
			case 9: // Slice, read later
				n := size()
				s, err := b.Slice(n)
				if n > len(m.readable) {
					if err == nil {
						t.Fatal("Slice past the end: no error")
					}
					break
				}
				lb := s.(*buf.LinkBuffer)
				slice = append(slice, lb)
				want = append(want, append([]byte(nil), m.readable[:n]...))
				live = append(live, nil) // checked through the slice below
				isSl = append(isSl, true)
				m.readable = m.readable[n:]
			case 10: // Release, after checking every live view
				for i, p := range live {
					if !isSl[i] {
						check("live slice before Release", p, want[i])
					}
				}
				b.Release()
				// The sub-readers outlive the parent's Release.
				j := 0
				for i := range live {
					if isSl[i] {
						got, err := slice[j].Next(len(want[i]))
						if err != nil {
							t.Fatalf("Slice read: %v", err)
						}
						check("Slice", got, want[i])
						slice[j].Release()
						j++
					}
				}
				live, want, slice, isSl = nil, nil, nil, nil
			case 11: // ReadByte
				c, err := b.ReadByte()
				if len(m.readable) == 0 {
					if err == nil {
						t.Fatal("ReadByte on empty: no error")
					}
					break
				}
				if c != m.readable[0] {
					t.Fatalf("ReadByte = %x, want %x", c, m.readable[0])
				}
				m.readable = m.readable[1:]
			case 12: // IndexByte, then Until
				d := byte(next())
				from := int(next()) % (len(m.readable) + 2)
				wantAt := -1
				if from < len(m.readable) {
					if j := bytes.IndexByte(m.readable[from:], d); j >= 0 {
						wantAt = from + j
					}
				}
				if at := b.IndexByte(d, from); at != wantAt {
					t.Fatalf("IndexByte(%x, %d) = %d, want %d", d, from, at, wantAt)
				}
				p, err := b.Until(d)
				i := bytes.IndexByte(m.readable, d)
				if i < 0 {
					if err == nil {
						t.Fatalf("Until(%x): no error without delimiter", d)
					}
					break
				}
				check("Until", p, m.readable[:i+1])
				live = append(live, p)
				isSl = append(isSl, false)
				want = append(want, append([]byte(nil), p...))
				m.readable = m.readable[i+1:]
			case 13: // ReadBinary / ReadString copies
				n := size()
				p, err := b.ReadBinary(n)
				if n > len(m.readable) {
					if err == nil {
						t.Fatal("ReadBinary past the end: no error")
					}
					break
				}
				check("ReadBinary", p, m.readable[:n])
				m.readable = m.readable[n:]
			}
			if b.Len() != len(m.readable) || b.MallocLen() != len(m.pending) {
				t.Fatalf("Len %d MallocLen %d, model %d %d", b.Len(), b.MallocLen(), len(m.readable), len(m.pending))
			}
		}
		for i, p := range live {
			if !isSl[i] {
				check("live slice at end", p, want[i])
			}
		}
		for _, s := range slice {
			s.Release()
		}
		b.Flush()
		m.readable = append(m.readable, m.pending...)
		check("final content", b.Bytes(), m.readable)
		b.Reset()
		if !b.IsEmpty() || b.Len() != 0 {
			t.Fatal("Reset left memory or bytes behind")
		}
	}
}
