package window_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/internal/window"
)

func TestSlides(t *testing.T) {
	var w window.Window
	w.Init(time.Second, 10) // 100 ms buckets
	ms := int64(time.Millisecond)
	w.Add(0, 1, 0)
	w.Add(150*ms, 2, 1)
	if a, b := w.Sum(150 * ms); a != 3 || b != 1 {
		t.Fatalf("sum %d %d, want 3 1", a, b)
	}
	// One second later the first bucket has left the window.
	if a, b := w.Sum(1050 * ms); a != 2 || b != 1 {
		t.Fatalf("sum after sliding %d %d, want 2 1", a, b)
	}
	// A bucket reused for a later slice starts from zero.
	w.Add(1000*ms, 5, 0)
	if a, _ := w.Sum(1000 * ms); a != 7 {
		t.Fatalf("sum with a reused bucket %d, want 7", a)
	}
	w.Reset()
	if a, b := w.Sum(1000 * ms); a != 0 || b != 0 {
		t.Fatalf("sum after Reset %d %d", a, b)
	}
}
