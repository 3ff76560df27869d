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
	classes []wrrClass // guarded by mu
	total   int        // sum of weights; read-only
}

// wrrClass is the instances of one weight. Among them the algorithm picks
// in index order: each time, the one picked fewest times (the first on
// ties), whose current weight is the highest of them. So a round of the
// algorithm costs one step per distinct weight rather than per instance
// (the cycle of n instances of equal weight is computed in O(n), not
// O(n^2)), and a cycle of at most maxCycle picks, which has at most
// sqrt(2*maxCycle) distinct weights, in O(maxCycle^1.5).
type wrrClass struct {
	weight  int
	members []int32 // indexes into insts, ascending
	pos     int     // members[pos] is picked next
	// current is the current weight of members[pos:]; those before pos
	// were picked once more this round, theirs is lower by the total.
	current int
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
// are run live under a mutex, a pick costing one step per distinct weight.
// Update costs O(n) plus, for a cycle computed in advance, one step per
// distinct weight for each of its picks.
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
	g := 0
	byWeight := make(map[int]int) // weight -> index in st.classes
	for i, in := range st.insts {
		w := in.EffectiveWeight()
		st.total += w
		g = gcd(w, g)
		c, ok := byWeight[w]
		if !ok {
			c = len(st.classes)
			byWeight[w] = c
			st.classes = append(st.classes, wrrClass{weight: w})
		}
		st.classes[c].members = append(st.classes[c].members, int32(i))
	}
	if length := st.total / g; length <= maxCycle {
		st.cycle = make([]int32, length)
		for k := range st.cycle {
			st.cycle[k] = int32(st.step())
		}
		st.classes = nil
		// Clients started together do not all begin with the same
		// instance.
		st.next.Store(rand.Uint64N(uint64(length)))
	}
	b.state.Store(st)
}

// step runs one round of the algorithm on st.classes and returns the
// index of the instance picked.
func (st *wrrState) step() int {
	best := 0
	for j := range st.classes {
		c := &st.classes[j]
		c.current += c.weight
		if b := &st.classes[best]; c.current > b.current || (c.current == b.current && c.members[c.pos] < b.members[b.pos]) {
			best = j
		}
	}
	c := &st.classes[best]
	i := c.members[c.pos]
	c.pos++
	if c.pos == len(c.members) {
		c.pos = 0
		c.current -= st.total
	}
	return int(i)
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
