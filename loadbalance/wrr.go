package loadbalance

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/petrel-rpc/petrel/discovery"
)

// maxCycle is the longest smooth round-robin cycle computed in advance (in
// picks); above it picks run the algorithm under a mutex.
const maxCycle = 1 << 14

// WeightedRoundRobin is the smooth weighted round robin balancer.
type WeightedRoundRobin struct {
	state atomic.Pointer[wrrState]
}

type wrrState struct {
	insts []discovery.Instance
	// cycle is one full cycle of picks (indexes into insts), computed by
	// Update when it is at most maxCycle long; nil otherwise.
	cycle []int32
	next  atomic.Uint64 // picks made with this state

	// Without a cycle, picks run the algorithm live:
	mu      sync.Mutex
	current []int // guarded by mu: each instance's current weight
	weights []int // effective weights; read-only
	total   int   // sum of weights; read-only
}

// NewWeightedRoundRobin returns a smooth weighted round robin balancer:
// each pick adds every instance's weight to its current weight, picks the
// instance with the highest current weight and subtracts the total weight
// from it. Over a cycle of total/gcd(weights) picks each instance gets
// exactly weight/gcd of them, interleaved (weights 5, 1, 1 give a a b a c a
// a). Update computes the cycle in advance when it is at most 16384 picks
// long, and a pick is then one atomic increment; the cycle starts at a
// random place, so that clients started together do not all call the same
// instance first. Longer cycles (very uneven weights over many instances)
// are run live under a mutex.
func NewWeightedRoundRobin() *WeightedRoundRobin { return &WeightedRoundRobin{} }

// Update replaces the instances and starts a new cycle: a cycle computed in
// advance at a random place in it (as for a new balancer), one run live at
// its beginning.
func (b *WeightedRoundRobin) Update(instances []discovery.Instance) {
	st := &wrrState{insts: copyInstances(instances)}
	n := len(st.insts)
	if n == 0 {
		b.state.Store(st)
		return
	}
	st.weights = make([]int, n)
	g := 0
	for i, in := range st.insts {
		w := in.EffectiveWeight()
		st.weights[i] = w
		st.total += w
		g = gcd(w, g)
	}
	st.current = make([]int, n)
	if length := st.total / g; length <= maxCycle {
		st.cycle = make([]int32, length)
		for k := range st.cycle {
			st.cycle[k] = int32(st.step())
		}
		clear(st.current)
		// Clients started together do not all begin with the same
		// instance.
		st.next.Store(rand.Uint64N(uint64(length)))
	}
	b.state.Store(st)
}

// step runs one round of the algorithm on st.current.
func (st *wrrState) step() int {
	best := 0
	for i, w := range st.weights {
		st.current[i] += w
		if st.current[i] > st.current[best] {
			best = i
		}
	}
	st.current[best] -= st.total
	return best
}

// Pick returns the next instance of the cycle; key is ignored.
func (b *WeightedRoundRobin) Pick(_ context.Context, _ string) (discovery.Instance, error) {
	st := b.state.Load()
	if st == nil || len(st.insts) == 0 {
		return discovery.Instance{}, ErrNoInstance
	}
	if len(st.insts) == 1 {
		return st.insts[0], nil
	}
	if st.cycle != nil {
		k := st.next.Add(1) - 1
		return st.insts[st.cycle[k%uint64(len(st.cycle))]], nil
	}
	st.mu.Lock()
	i := st.step()
	st.mu.Unlock()
	return st.insts[i], nil
}
