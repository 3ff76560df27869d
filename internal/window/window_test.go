package window_test

import (
	"sync"
	"sync/atomic"
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

// TestUndoB: a b taken back leaves its slice; once the slice has left
// the window, a later slice in its bucket is not touched.
func TestUndoB(t *testing.T) {
	var w window.Window
	w.Init(time.Second, 10)
	ms := int64(time.Millisecond)
	w.Add(10*ms, 0, 2)
	w.UndoB(20 * ms)
	if _, b := w.Sum(20 * ms); b != 1 {
		t.Fatalf("b = %d after one undo of two, want 1", b)
	}
	w.Add(1010*ms, 0, 1) // bucket 0 moves to a new slice
	w.UndoB(20 * ms)
	if _, b := w.Sum(1010 * ms); b != 1 {
		t.Fatalf("b = %d: an undo of a slice gone reached its successor", b)
	}
}

// TestAddBIfIsAtomic: goroutines racing to count b under a bound never
// pass it together.
func TestAddBIfIsAtomic(t *testing.T) {
	var w window.Window
	w.Init(time.Second, 10)
	w.Add(0, 1000, 0)
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if w.AddBIf(0, func(a, b int64) bool { return b+1 <= a/10 }) {
					granted.Add(1)
				}
				w.Add(0, 0, 0)
			}
		})
	}
	wg.Wait()
	if _, b := w.Sum(0); granted.Load() != 100 || b != 100 {
		t.Fatalf("granted %d, counted %d; want 100 under a bound of 100", granted.Load(), b)
	}
}

// TestAddBIfAcrossBuckets: two AddBIf calls racing on either side of a
// bucket boundary do not both pass a bound of one b in the window. The
// second starts while the first is inside fits.
func TestAddBIfAcrossBuckets(t *testing.T) {
	var w window.Window
	w.Init(time.Second, 10) // 100 ms buckets
	ms := int64(time.Millisecond)
	one := func(a, b int64) bool { return b < 1 }
	second := make(chan bool, 1)
	started, ended := false, false
	var secondOK bool
	first := w.AddBIf(50*ms, func(a, b int64) bool {
		if !started {
			started = true
			go func() { second <- w.AddBIf(150*ms, one) }()
			wait := time.NewTimer(20 * time.Millisecond)
			defer wait.Stop()
			select { // it should not end until the first call has
			case secondOK = <-second:
				ended = true
			case <-wait.C:
			}
		}
		return one(a, b)
	})
	if !ended {
		secondOK = <-second
	}
	if first && secondOK {
		t.Fatal("both AddBIf calls counted, past a bound of one in the window")
	}
	if _, b := w.Sum(150 * ms); b != 1 {
		t.Fatalf("b = %d in the window, want 1", b)
	}
}

// TestRotationLosesNothing: counts made by goroutines racing to move a
// bucket to a new slice of time are all kept.
func TestRotationLosesNothing(t *testing.T) {
	var w window.Window
	w.Init(time.Second, 10)
	ms := int64(time.Millisecond)
	for round := int64(1); round <= 50; round++ {
		now := round * 1000 * ms // each round reuses bucket 0 for a new slice
		w.Add(now-1000*ms, 7, 7)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 50 {
					w.Add(now, 1, 1)
				}
			})
		}
		wg.Wait()
		if a, b := w.Sum(now); a != 200 || b != 200 {
			t.Fatalf("round %d: sum %d %d after 200 counts, want 200 200", round, a, b)
		}
	}
}

func BenchmarkAdd(b *testing.B) {
	var w window.Window
	w.Init(time.Second, 10)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Add(time.Now().UnixNano(), 1, 0)
		}
	})
}

// TestAddBIfSeesLaterSlice: a caller that read the clock just before a
// bucket boundary but reaches AddBIf after a call that read it just past
// the boundary still sees that call's count, so the two do not together
// pass a bound of one b.
func TestAddBIfSeesLaterSlice(t *testing.T) {
	var w window.Window
	w.Init(time.Second, 10) // 100 ms buckets
	ms := int64(time.Millisecond)
	one := func(a, b int64) bool { return b < 1 }
	if !w.AddBIf(100*ms, one) {
		t.Fatal("the first AddBIf in an empty window refused")
	}
	if w.AddBIf(99*ms, one) {
		t.Fatal("an AddBIf whose clock read lagged by 1 ms counted a second b under a bound of one")
	}
	if _, b := w.Sum(99 * ms); b != 1 {
		t.Fatalf("Sum at 99 ms: b = %d, want the 1 counted at 100 ms", b)
	}
	// A lagging Sum counts over the window ending at the newest slice: a
	// slice a whole window older than that one stays out.
	w.Add(50*ms, 0, 2)   // bucket 0, slice 0
	w.Add(1050*ms, 0, 5) // bucket 0 again, slice 10
	if _, b := w.Sum(1000 * ms); b != 1+5 {
		t.Fatalf("Sum at 1000 ms: b = %d, want 6", b)
	}
	w.Add(1250*ms, 0, 3) // slice 12: the window now starts at slice 3
	if _, b := w.Sum(1050 * ms); b != 5+3 {
		t.Fatalf("Sum at 1050 ms: b = %d, want 8 (slice 1 is older than the window ending at slice 12)", b)
	}
}
