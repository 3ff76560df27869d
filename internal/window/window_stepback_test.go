package window_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/internal/window"
)

// TestClockStepsBack: a caller's clock without a monotonic reading (a
// Now returning time.Now().UTC(), which strips it) goes back when the wall
// clock is set back. Counted more than a window before the newest bucket's
// slice, the counts must still be seen by Sum at that time, and AddBIf's
// bound must still hold, instead of landing in buckets of the abandoned
// future that no Sum of the present sees until the clock catches up.
func TestClockStepsBack(t *testing.T) {
	var w window.Window
	w.Init(time.Second, 10) // 100 ms buckets
	ms := int64(time.Millisecond)
	hour := int64(time.Hour)
	for i := range int64(10) {
		w.Add(hour+i*100*ms, 5, 5) // a full window an hour on
	}
	// The clock goes back an hour.
	w.Add(0, 1, 0)
	w.Add(150*ms, 2, 1)
	if a, b := w.Sum(150 * ms); a != 3 || b != 1 {
		t.Fatalf("after the clock went back an hour: sum %d %d, want 3 1", a, b)
	}
	granted := 0
	for range 5 {
		if w.AddBIf(200*ms, func(_, b int64) bool { return b < 3 }) {
			granted++
		}
	}
	if granted != 2 {
		t.Fatalf("after the clock went back an hour, AddBIf with a bound of 3 b (1 counted) granted %d, want 2", granted)
	}
	// Sliding on from there works as usual.
	if a, b := w.Sum(1150 * ms); a != 0 || b != 2 {
		t.Fatalf("a window later: sum %d %d, want 0 2", a, b)
	}
}
