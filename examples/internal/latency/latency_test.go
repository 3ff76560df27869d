package latency

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestBucketsCoverEveryDuration: each duration falls in a bucket whose
// lower end is at most it and within 1/32 of it.
func TestBucketsCoverEveryDuration(t *testing.T) {
	check := func(v uint64) {
		i := index(v)
		if i < 0 || i >= buckets {
			t.Fatalf("index(%d) = %d, want in [0, %d)", v, i, buckets)
		}
		lo := uint64(lowest(i))
		if lo > v || float64(v-lo) > float64(v)/sub {
			t.Fatalf("%d: bucket %d starts at %d", v, i, lo)
		}
		if i+1 < buckets && uint64(lowest(i+1)) <= v {
			t.Fatalf("%d: bucket %d starts at %d, the next at %d", v, i, lo, lowest(i+1))
		}
	}
	for v := uint64(0); v < 1<<12; v++ {
		check(v)
	}
	for s := 12; s < 63; s++ {
		check(1<<s - 1)
		check(1 << s)
		check(1<<s + 1)
	}
	check(math.MaxInt64)
}

// TestPercentiles: percentiles of random latencies are within 1/32 of the
// exact ones from the sorted samples, Merge adds histograms up, and the
// maximum is exact.
func TestPercentiles(t *testing.T) {
	var a, b Histogram
	var all []time.Duration
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 100000 {
		d := time.Duration(r.ExpFloat64() * float64(200*time.Microsecond))
		all = append(all, d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	slices.Sort(all)
	if a.Count() != uint64(len(all)) || a.Max() != all[len(all)-1] {
		t.Fatalf("count %d max %v, want %d and %v", a.Count(), a.Max(), len(all), all[len(all)-1])
	}
	for _, p := range []float64{0, 50, 90, 99, 99.9, 100} {
		want := all[min(int(p/100*float64(len(all))), len(all)-1)]
		got := a.Percentile(p)
		if got > want || float64(want-got) > float64(want)/sub {
			t.Errorf("p%v = %v, want %v within 1/%d below", p, got, want, sub)
		}
	}
	var empty Histogram
	if empty.Percentile(50) != 0 || empty.Max() != 0 {
		t.Errorf("empty histogram: p50 %v max %v, want 0", empty.Percentile(50), empty.Max())
	}
}
