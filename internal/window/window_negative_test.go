package window_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/internal/window"
)

// TestNegativeTimes checks that times before 1970 (a fake clock started at
// time.Time{}, whose UnixNano is negative) count and slide as later ones
// do, instead of indexing the ring with a negative number.
func TestNegativeTimes(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("a window given a negative time panicked: %v", r)
		}
	}()
	var w window.Window
	w.Init(time.Second, 10) // 100 ms buckets
	ms := int64(time.Millisecond)
	base := time.Time{}.UnixNano()
	if base >= 0 {
		t.Fatalf("time.Time{}.UnixNano() = %d; the test needs a negative time", base)
	}
	w.Add(base, 1, 0)
	w.Add(base+150*ms, 2, 1)
	if a, b := w.Sum(base + 150*ms); a != 3 || b != 1 {
		t.Fatalf("sum %d %d, want 3 1", a, b)
	}
	if a, b := w.Sum(base + 1050*ms); a != 2 || b != 1 {
		t.Fatalf("sum after sliding %d %d, want 2 1", a, b)
	}
	if !w.AddBIf(base+1050*ms, func(_, b int64) bool { return b < 2 }) {
		t.Fatal("AddBIf refused with one b counted and a bound of 2")
	}
	w.UndoB(base + 1050*ms)
	if _, b := w.Sum(base + 1050*ms); b != 1 {
		t.Fatalf("b after UndoB %d, want 1", b)
	}

	// Around 0, slices are as wide as elsewhere: -50ms and +50ms are in
	// neighbouring slices, so at 950ms (a window of the slices from 0 to
	// 100ms to 900 to 1000ms) only the +50ms count is left.
	w.Reset()
	w.Add(-50*ms, 1, 0)
	w.Add(50*ms, 10, 0)
	if a, _ := w.Sum(950 * ms); a != 10 {
		t.Fatalf("sum at 950ms of counts at -50ms and +50ms %d, want 10", a)
	}
}
