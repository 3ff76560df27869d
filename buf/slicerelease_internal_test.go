package buf

import "testing"

// TestSliceReadToItsEndGivesBackItsLastBlock: a Slice read to its end and
// released drops its reference to every block it covers, so the last one
// too goes back to its pool once the parent has released it; the slice
// used to keep the block of its last bytes referenced for good, and the
// block was never pooled again.
func TestSliceReadToItsEndGivesBackItsLastBlock(t *testing.T) {
	for _, size := range []int{100, 3 * defaultNodeSize} {
		b := NewLinkBuffer()
		for done := 0; done < size; {
			k := min(size-done, defaultNodeSize/2)
			b.Malloc(k)
			b.Flush()
			done += k
		}
		var roots []*node
		for n := b.first.Load(); n != nil; n = n.next.Load() {
			roots = append(roots, n)
		}
		r, err := b.Slice(size)
		if err != nil {
			t.Fatal(err)
		}
		b.Release()
		b.Reset()
		half := size / 2
		if _, err := r.Next(half); err != nil {
			t.Fatal(err)
		}
		r.Release()
		last := roots[len(roots)-1]
		if got := last.refs.Load(); got != 1 {
			t.Fatalf("size %d: half read: last block has %d references, want the slice's 1", size, got)
		}
		if _, err := r.Next(size - half); err != nil {
			t.Fatal(err)
		}
		r.Release()
		for i, n := range roots {
			if got := n.refs.Load(); got != 0 {
				t.Fatalf("size %d: block %d of %d still has %d references after the slice was read to its end and released",
					size, i+1, len(roots), got)
			}
		}
		if r.Len() != 0 {
			t.Fatalf("size %d: Len %d after reading everything", size, r.Len())
		}
		if _, err := r.Next(1); err == nil {
			t.Fatalf("size %d: Next(1) of an empty slice: no error", size)
		}
		r.Release() // again: nothing left to give back
		// Written to afterwards (it is a *LinkBuffer), it works as any.
		w := r.(*LinkBuffer)
		w.WriteString("abc")
		r.Release()
		w.Flush()
		if p, err := r.Next(3); err != nil || string(p) != "abc" {
			t.Fatalf("size %d: written to after its end: Next(3) = %q, %v", size, p, err)
		}
		r.Release()
	}
}
