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

type randomState struct {
	insts []discovery.Instance
	cum   []uint64 // cum[i]: sum of the weights of insts[0..i]
	equal bool     // all weights are equal: draw an index
}

// NewWeightedRandom returns a balancer that sends each call to an instance
// drawn at random with probability weight/sum of weights (the draw uses
// math/rand/v2's per-thread generator: no lock).
func NewWeightedRandom() *WeightedRandom { return &WeightedRandom{} }

// Update replaces the instances.
func (b *WeightedRandom) Update(instances []discovery.Instance) {
	st := &randomState{insts: copyInstances(instances), equal: true}
	st.cum = make([]uint64, len(st.insts))
	var sum uint64
	for i, in := range st.insts {
		w := in.EffectiveWeight()
		if i > 0 && w != st.insts[0].EffectiveWeight() {
			st.equal = false
		}
		sum += uint64(w)
		st.cum[i] = sum
	}
	b.state.Store(st)
}

// Pick draws an instance; key is ignored.
func (b *WeightedRandom) Pick(_ context.Context, _ string) (discovery.Instance, error) {
	st := b.state.Load()
	if st == nil || len(st.insts) == 0 {
		return discovery.Instance{}, ErrNoInstance
	}
	n := len(st.insts)
	if st.equal {
		return st.insts[rand.IntN(n)], nil
	}
	r := rand.Uint64N(st.cum[n-1])
	// The first i with r < cum[i].
	lo, hi := 0, n-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r < st.cum[mid] {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return st.insts[lo], nil
}
