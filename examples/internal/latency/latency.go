// Package latency is the examples' record of call latencies: a histogram of
// fixed size, whatever the number of calls, with percentiles within about 3%
// of the exact ones.
package latency

import (
	"math/bits"
	"time"
)

// sub is the number of buckets per power of two above 2*sub nanoseconds;
// below that each nanosecond has a bucket of its own.
const (
	subBits = 5
	sub     = 1 << subBits
	// buckets covers every non-negative time.Duration (63 bits).
	buckets = 2*sub + (63-subBits-1)*sub
)

// Histogram counts durations. The zero value is empty and ready; it is not
// safe for concurrent use: give each goroutine its own and Merge them.
type Histogram struct {
	counts [buckets]uint64
	n      uint64
	max    time.Duration
}

// index is the bucket of v >= 0.
func index(v uint64) int {
	if v < 2*sub {
		return int(v)
	}
	s := bits.Len64(v) - subBits - 1 // v>>s is in [sub, 2*sub)
	return 2*sub + (s-1)*sub + int(v>>s) - sub
}

// lowest is the smallest duration of bucket i.
func lowest(i int) time.Duration {
	if i < 2*sub {
		return time.Duration(i)
	}
	s := (i-2*sub)/sub + 1
	m := (i-2*sub)%sub + sub
	return time.Duration(uint64(m) << s)
}

// Record counts d (a negative d as 0).
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[index(uint64(d))]++
	h.n++
	h.max = max(h.max, d)
}

// Merge adds o's counts to h's.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the longest duration recorded, exactly.
func (h *Histogram) Max() time.Duration { return h.max }

// Percentile is the duration below which p percent (0 to 100) of those
// recorded fall: the lower end of its bucket, never above Max. It is 0 for
// an empty histogram.
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	// The rank of the duration asked for, counted from 1.
	p = min(max(p, 0), 100)
	rank := min(uint64(p/100*float64(h.n))+1, h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(lowest(i), h.max)
		}
	}
	return h.max
}
