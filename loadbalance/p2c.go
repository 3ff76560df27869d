package loadbalance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
)

// DefaultErrorPenalty is what a failed call adds to its latency in P2C's
// average.
const DefaultErrorPenalty = 100 * time.Millisecond

// P2CConfig configures NewP2C. Zero fields take their defaults.
type P2CConfig struct {
	// ErrorPenalty is added to the latency of a failed call before it
	// enters the instance's average, so that an instance failing fast
	// does not look fast. Default DefaultErrorPenalty (100ms).
	ErrorPenalty time.Duration
	// HalfLife is the number of picks, per instance, after which the
	// latency average of an instance that got no call halves, so that an
	// instance once slow gets tried again. Default 32.
	HalfLife int
}

// DefaultP2CConfig returns the defaults.
func DefaultP2CConfig() P2CConfig {
	return P2CConfig{ErrorPenalty: DefaultErrorPenalty, HalfLife: 32}
}

// Validate reports a configuration that cannot work.
func (c *P2CConfig) Validate() error {
	if c.ErrorPenalty < 0 {
		return fmt.Errorf("loadbalance: P2CConfig.ErrorPenalty is %v; it must be 0 (default) or more", c.ErrorPenalty)
	}
	if c.HalfLife < 0 {
		return fmt.Errorf("loadbalance: P2CConfig.HalfLife is %d; it must be 0 (default) or more", c.HalfLife)
	}
	return nil
}

// P2C is the power-of-two-choices balancer. The zero value has the
// defaults of P2CConfig.
type P2C struct {
	cfg   P2CConfig
	picks atomic.Uint64 // picks made, the clock of the averages' decay
	state atomic.Pointer[p2cState]
}

type p2cState struct {
	insts  []discovery.Instance
	nodes  []*p2cNode
	byAddr map[string]*p2cNode
	// gone holds the nodes of addresses no longer listed whose calls may
	// still be in flight: those that left in the Update that made this
	// state, and those that left earlier with calls still in flight then.
	// Done counts their calls' ends there, and an address that comes back
	// takes its node again: a new node would take the Dones of the calls
	// picked before it left for those of the calls picked since.
	gone     map[string]*p2cNode
	halfLife uint64 // picks after which an unsampled average halves
	penalty  int64  // ErrorPenalty, nanoseconds
}

// p2cNode is an instance's load. Nodes survive Update for the addresses
// that stay, whatever their new weight, so that their history is kept and
// no Pick or Done made meanwhile lands on a node about to be dropped (a
// copy of the counts, made while calls end, left one in flight for good);
// and for the addresses that leave while their calls are in flight (see
// p2cState.gone).
type p2cNode struct {
	inflight atomic.Int64  // picked and not yet Done
	ewma     atomic.Int64  // latency average, nanoseconds; 0: no sample yet
	sampled  atomic.Uint64 // value of P2C.picks at the last sample
	weight   atomic.Int64  // effective weight, set by Update
}

// NewP2C returns a power-of-two-choices balancer: a pick draws two distinct
// instances at random and takes the one with the lower cost
//
//	(latency average + 1µs) × (calls in flight + 1) / weight
//
// (without the latency factor when either has no average yet: a new
// instance is compared on its calls in flight).
// The latency average moves 1/8 of the way to each reported latency (a
// failed call reports its latency plus ErrorPenalty) and halves for every
// HalfLife × instances picks in which the instance got no report. Callers
// report each call's end with Done (Feedback); without reports P2C
// balances on calls in flight alone, which a Pick increments.
func NewP2C(cfg P2CConfig) (*P2C, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &P2C{cfg: cfg}, nil // Update gives zero fields their defaults
}

// Update replaces the instances, keeping the load of those that stay. An
// address listed twice has one load and two chances to be drawn. An
// address that leaves while calls to it are in flight keeps its load until
// they end, and finds it again if it comes back before.
func (b *P2C) Update(instances []discovery.Instance) {
	old := b.state.Load()
	// Zero fields (from the config or a P2C made without NewP2C) take the
	// defaults: a half-life of 0 would divide by zero in decayed.
	cfg, def := b.cfg, DefaultP2CConfig()
	if cfg.HalfLife <= 0 {
		cfg.HalfLife = def.HalfLife
	}
	if cfg.ErrorPenalty <= 0 {
		cfg.ErrorPenalty = def.ErrorPenalty
	}
	st := &p2cState{
		insts:    copyInstances(instances),
		byAddr:   make(map[string]*p2cNode, len(instances)),
		halfLife: halfLife(cfg.HalfLife, len(instances)),
		penalty:  int64(cfg.ErrorPenalty),
	}
	st.nodes = make([]*p2cNode, len(st.insts))
	now := b.picks.Load()
	for i, in := range st.insts {
		w := int64(in.EffectiveWeight())
		if n := st.byAddr[in.Address]; n != nil {
			st.nodes[i] = n // listed twice: one load, whichever entry is picked
			continue
		}
		var n *p2cNode
		if old != nil {
			if n = old.byAddr[in.Address]; n == nil {
				n = old.gone[in.Address] // back while its calls are in flight
			}
		}
		if n == nil {
			n = &p2cNode{}
			n.sampled.Store(now)
		}
		n.weight.Store(w)
		st.nodes[i] = n
		st.byAddr[in.Address] = n
	}
	if old != nil {
		// An address leaving now is kept whatever its count: a Pick of
		// the old state may be adding to it still. One that left before
		// is kept while its calls are in flight.
		for addr, n := range old.byAddr {
			if st.byAddr[addr] == nil {
				st.keepGone(addr, n)
			}
		}
		for addr, n := range old.gone {
			if st.byAddr[addr] == nil && n.inflight.Load() > 0 {
				st.keepGone(addr, n)
			}
		}
	}
	b.state.Store(st)
}

// keepGone keeps n, the node of addr, which is no longer listed.
func (st *p2cState) keepGone(addr string, n *p2cNode) {
	if st.gone == nil {
		st.gone = make(map[string]*p2cNode)
	}
	st.gone[addr] = n
}

// Pick draws two instances and returns the less loaded; key is ignored.
func (b *P2C) Pick(_ context.Context, _ string) (discovery.Instance, error) {
	st := b.state.Load()
	if st == nil || len(st.insts) == 0 {
		return discovery.Instance{}, ErrNoInstance
	}
	now := b.picks.Add(1)
	n := len(st.insts)
	if n == 1 {
		st.nodes[0].inflight.Add(1)
		return st.insts[0], nil
	}
	i := rand.IntN(n)
	j := rand.IntN(n - 1)
	if j >= i {
		j++
	}
	if st.better(j, i, now) {
		i = j
	}
	st.nodes[i].inflight.Add(1)
	return st.insts[i], nil
}

// better reports whether instance a costs less than instance b. When
// either has no latency average yet (a new instance, or one whose average
// decayed away), they are compared on calls in flight per weight alone.
func (st *p2cState) better(a, b int, now uint64) bool {
	na, nb := st.nodes[a], st.nodes[b]
	la := decayed(na.ewma.Load(), na.sampled.Load(), now, st.halfLife)
	lb := decayed(nb.ewma.Load(), nb.sampled.Load(), now, st.halfLife)
	ca := float64(na.inflight.Load()+1) / float64(na.weight.Load())
	cb := float64(nb.inflight.Load()+1) / float64(nb.weight.Load())
	if la != 0 && lb != 0 {
		// In floats: an average near the largest int64 plus 1µs would wrap.
		ca *= float64(la) + float64(time.Microsecond)
		cb *= float64(lb) + float64(time.Microsecond)
	}
	return ca < cb
}

// Done reports the end of a call to address. A report for an address no
// longer in the list counts against the load it had, kept while its calls
// are in flight (see Update); other reports for addresses not listed are
// ignored.
func (b *P2C) Done(address string, latency time.Duration, err error) {
	st := b.state.Load()
	if st == nil {
		return
	}
	nd := st.byAddr[address]
	if nd == nil {
		if nd = st.gone[address]; nd == nil {
			return
		}
	}
	if nd.inflight.Add(-1) < 0 {
		nd.inflight.Store(0) // a Done without its Pick
	}
	sample := int64(max(latency, 0))
	if err != nil {
		// Saturated: a wrapped sum would be a negative latency, the
		// failing instance looking the fastest.
		if pen := st.penalty; sample > math.MaxInt64-pen {
			sample = math.MaxInt64
		} else {
			sample += pen
		}
	}
	now := b.picks.Load()
	for {
		old := nd.ewma.Load()
		next := sample
		if avg := decayed(old, nd.sampled.Load(), now, st.halfLife); avg != 0 {
			next = avg + (sample-avg)/8
		}
		if nd.ewma.CompareAndSwap(old, next) {
			break
		}
	}
	nd.sampled.Store(now)
}

// halfLife is perInstance × instances (at least one), saturated at the
// largest uint64 rather than wrapped: a wrapped product would be a short
// half-life, or 0, a division by zero in decayed.
func halfLife(perInstance, instances int) uint64 {
	h, n := uint64(perInstance), uint64(max(instances, 1))
	if h > math.MaxUint64/n {
		return math.MaxUint64
	}
	return h * n
}

// decayed halves ewma for every halfLife picks since sampled.
func decayed(ewma int64, sampled, now, halfLife uint64) int64 {
	if now <= sampled {
		return ewma
	}
	return ewma >> min((now-sampled)/halfLife, 63)
}
