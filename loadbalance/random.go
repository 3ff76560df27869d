package loadbalance

import (
	"context"
	"math/rand/v2"
	"sync/atomic"

	"github.com/petrel-rpc/petrel/discovery"
)

// WeightedRandom is the weighted random balancer.
type WeightedRandom struct {
	state atomic.Pointer[randomState]
}

// randomState is an alias table (Vose's method, in integers): draw a
// column i uniformly, then keep i when a draw below total falls under
// keep[i], else take alias[i].
type randomState struct {
	insts []discovery.Instance
	keep  []uint64 // in [0, total]; total: always keep
	alias []int32
	total uint64 // sum of the weights
	equal bool   // all weights are equal: one draw of an index
}

// NewWeightedRandom returns a balancer that sends each call to an instance
// drawn at random with probability weight/sum of weights: an alias table
// built by Update makes a pick two draws from math/rand/v2's per-thread
// generator (no lock) whatever the number of instances.
func NewWeightedRandom() *WeightedRandom { return &WeightedRandom{} }

// Update replaces the instances.
func (b *WeightedRandom) Update(instances []discovery.Instance) {
	st := &randomState{insts: copyInstances(instances), equal: true}
	n := len(st.insts)
	st.keep = make([]uint64, n)
	st.alias = make([]int32, n)
	scaled := make([]uint64, n) // weight × n, compared with total
	var small, large []int32
	for i, in := range st.insts {
		w := uint64(in.EffectiveWeight())
		if i > 0 && int(w) != st.insts[0].EffectiveWeight() {
			st.equal = false
		}
		st.total += w
		scaled[i] = w * uint64(n)
	}
	for i := range scaled {
		if scaled[i] < st.total {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		st.keep[s], st.alias[s] = scaled[s], l
		// l gives column s the rest of its height.
		scaled[l] -= st.total - scaled[s]
		if scaled[l] < st.total {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range large {
		st.keep[i], st.alias[i] = st.total, i
	}
	for _, i := range small { // only by rounding; none in exact integers
		st.keep[i], st.alias[i] = st.total, i
	}
	b.state.Store(st)
}

// Pick draws an instance; key is ignored.
func (b *WeightedRandom) Pick(_ context.Context, _ string) (discovery.Instance, error) {
	st := b.state.Load()
	if st == nil || len(st.insts) == 0 {
		return discovery.Instance{}, ErrNoInstance
	}
	i := rand.IntN(len(st.insts))
	if st.equal || rand.Uint64N(st.total) < st.keep[i] {
		return st.insts[i], nil
	}
	return st.insts[st.alias[i]], nil
}
