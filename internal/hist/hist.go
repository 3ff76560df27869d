// Package hist is the latency histogram of the benchmark commands
// (bench/cmd/netbench, bench/cmd/rpcbench) and of the examples' load loops:
// log-linear buckets in nanoseconds, of fixed size whatever the number of
// values, one histogram per load-generating goroutine, merged at the end.
package hist

import (
	"math"
	"math/bits"
)

// Histogram counts latencies in nanoseconds in log-linear buckets: values
// below 2*histSub are exact; above, each power of two is split into histSub
// buckets, so a bucket's midpoint is within 1/(2*histSub), about 0.4%, of any value
// in it. It is not safe for concurrent use; each client connection owns one
// and they are merged at the end.
type Histogram struct {
	counts [histBuckets]uint64
	total  uint64
	sum    uint64 // of the recorded values, for Mean
	max    uint64
}

const (
	histSubBits = 7
	histSub     = 1 << histSubBits // buckets per power of two
	histMaxLog  = 44               // values up to 2^44 ns (about 4.9 hours)
	histBuckets = (histMaxLog - histSubBits + 1) * histSub
)

func histIndex(v uint64) int {
	shift := bits.Len64(v) - (histSubBits + 1)
	if shift <= 0 {
		return int(v)
	}
	if shift > histMaxLog-histSubBits-1 {
		return histBuckets - 1
	}
	return shift*histSub + int(v>>uint(shift))
}

// histValue is the midpoint of bucket i.
func histValue(i int) uint64 {
	if i < 2*histSub {
		return uint64(i)
	}
	shift := i/histSub - 1
	sub := uint64(i - shift*histSub)
	low := sub << uint(shift)
	return low + (uint64(1)<<uint(shift))/2
}

// Record adds one latency of ns nanoseconds (negative counts as 0).
func (h *Histogram) Record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	v := uint64(ns)
	h.counts[histIndex(v)]++
	h.total++
	h.sum += v
	if v > h.max {
		h.max = v
	}
}

// Merge adds the counts of o to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.sum += o.sum
	if o.max > h.max {
		h.max = o.max
	}
}

// Quantile returns the latency in ns below or at which a fraction q of the
// recorded values lie (0 when nothing was recorded): the value of the
// nearest rank, ceil(q*n).
func (h *Histogram) Quantile(q float64) uint64 {
	if h.total == 0 {
		return 0
	}
	// The tolerance keeps a product that float rounding put just above an
	// integer (0.99*100) from taking the next rank; it is far below the
	// 0.001 steps of q*n for the quantiles asked for.
	x := q * float64(h.total)
	rank := uint64(1) // also for q <= 0 (or NaN)
	if r := math.Ceil(x - x*1e-14); r > 1 {
		rank = uint64(min(r, float64(h.total)))
	}
	if rank > h.total {
		rank = h.total
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := histValue(i)
			if v > h.max {
				v = h.max
			}
			return v
		}
	}
	return h.max
}

// Total is the number of values recorded.
func (h *Histogram) Total() uint64 { return h.total }

// Max is the largest value recorded, in nanoseconds.
func (h *Histogram) Max() uint64 { return h.max }

// Mean is the mean of the recorded values in nanoseconds (0 when empty).
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.total)
}
