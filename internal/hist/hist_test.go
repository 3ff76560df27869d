package hist_test

import (
	"math"
	"testing"

	"github.com/petrel-rpc/petrel/internal/hist"
)

func TestQuantiles(t *testing.T) {
	var h hist.Histogram
	for v := int64(1); v <= 100000; v++ {
		h.Record(v * 1000) // 1us .. 100ms
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		got := float64(h.Quantile(q))
		want := q * 100000 * 1000
		if math.Abs(got-want)/want > 0.005 {
			t.Errorf("Quantile(%v) = %v, want %v within 0.5%%", q, got, want)
		}
	}
	var empty hist.Histogram
	if got := empty.Quantile(0.99); got != 0 {
		t.Errorf("empty Quantile = %d, want 0", got)
	}
}

func TestBuckets(t *testing.T) {
	prev := -1
	for v := uint64(0); v < 1<<44; v = v + 1 + v/97 {
		i := hist.Index(v)
		if i < prev {
			t.Fatalf("Index(%d) = %d < Index of a smaller value %d", v, i, prev)
		}
		if i >= hist.Buckets {
			t.Fatalf("Index(%d) = %d out of range", v, i)
		}
		prev = i
		if mid := hist.Value(i); v > 0 && math.Abs(float64(mid)-float64(v))/float64(v) > 1.0/hist.Sub {
			t.Fatalf("value %d in bucket %d with midpoint %d: error over 1/%d", v, i, mid, hist.Sub)
		}
	}
	if got := hist.Index(math.MaxUint64); got != hist.Buckets-1 {
		t.Errorf("Index(max) = %d, want the last bucket %d", got, hist.Buckets-1)
	}
	var a, b hist.Histogram
	a.Record(10)
	b.Record(-5) // clamped to 0
	b.Record(1e6)
	a.Merge(&b)
	if a.Total() != 3 || a.Max() != 1e6 || a.Quantile(1) != 1e6 || a.Quantile(0) != 0 || a.Mean() != (10+1e6)/3.0 {
		t.Errorf("merged histogram: total %d max %d q1 %d q0 %d", a.Total(), a.Max(), a.Quantile(1), a.Quantile(0))
	}
}

// A quantile is the smallest recorded value with at least a fraction q of
// the values at or below it (the nearest rank, ceil(q*n)), not the value of
// rank round(q*n), which for some n has less than q of the values at or
// below it. Values below 256 ns are recorded exactly.
func TestQuantileNearestRank(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		q    float64
		want uint64
	}{
		{160, 0.99, 159},  // 158.4 -> 159: 158 of 160 is 98.75 %
		{100, 0.99, 99},   // exactly 99
		{200, 0.5, 100},   // exactly 100
		{7, 0.5, 4},       // 3.5 -> 4
		{250, 0.999, 250}, // 249.75 -> 250
		{10, 0.999, 10},   // a small sample: its largest value
		{1, 0.5, 1},       // one value
		{254, 0.99, 252},  // 251.46 -> 252
		{120, 0.999, 120}, // 119.88 -> 120
		{240, 0.99, 238},  // 237.6 -> 238
		{230, 0.99, 228},  // 227.7 -> 228
		{210, 0.99, 208},  // 207.9 -> 208
		{170, 0.99, 169},  // 168.3 -> 169
		{180, 0.99, 179},  // 178.2 -> 179
		{250, 0.99, 248},  // 247.5 -> 248
	} {
		var h hist.Histogram
		for v := int64(1); v <= tc.n; v++ {
			h.Record(v)
		}
		if got := h.Quantile(tc.q); got != tc.want {
			t.Errorf("values 1..%d: Quantile(%v) = %d, want %d", tc.n, tc.q, got, tc.want)
		}
	}
}
