package loadbalance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/petrel-rpc/petrel/discovery"
)

// DefaultVirtualNodes is the number of points an instance of the default
// weight (discovery.DefaultWeight) has on the consistent hash ring.
const DefaultVirtualNodes = 160

// maxRingPoints bounds the ring's size whatever the weights.
const maxRingPoints = 1 << 20

// ConsistentHashConfig configures NewConsistentHash. Zero fields take their
// defaults.
type ConsistentHashConfig struct {
	// VirtualNodes is the number of points on the ring of an instance of
	// the default weight (discovery.DefaultWeight, 10); an instance has
	// VirtualNodes × weight / DefaultWeight of them (at least one), a
	// number that depends on its own weight alone, so that the instances
	// that stay keep their keys when others come and go. More points spread
	// keys more evenly and cost memory and a slightly longer search; raise
	// it when the weights are small (weight 1 gets a tenth of
	// VirtualNodes). Past 2^20 points in all, every instance's count is
	// scaled down to fit, and then a change of the instances also moves
	// keys between instances that stay. Default DefaultVirtualNodes (160).
	VirtualNodes int
}

// DefaultConsistentHashConfig returns the defaults.
func DefaultConsistentHashConfig() ConsistentHashConfig {
	return ConsistentHashConfig{VirtualNodes: DefaultVirtualNodes}
}

// Validate reports a configuration that cannot work.
func (c *ConsistentHashConfig) Validate() error {
	if c.VirtualNodes < 0 {
		return fmt.Errorf("loadbalance: ConsistentHashConfig.VirtualNodes is %d; it must be 0 (default) or more", c.VirtualNodes)
	}
	return nil
}

// ConsistentHash is the consistent hashing balancer. The zero value has the
// defaults of ConsistentHashConfig.
type ConsistentHash struct {
	vnodes int
	state  atomic.Pointer[ringState]
}

type ringState struct {
	insts  []discovery.Instance
	points []uint64 // sorted hashes of the virtual nodes
	owner  []int32  // owner[k]: index in insts of points[k]
}

// NewConsistentHash returns a balancer that maps each call's key onto a
// hash ring: the call goes to the owner of the first virtual node at or
// after the key's hash. A key keeps its instance while that instance
// stays, and when an instance leaves only the keys it owned move (to the
// owners of the next points). A call without a key goes to an instance
// drawn at random by weight.
func NewConsistentHash(cfg ConsistentHashConfig) (*ConsistentHash, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &ConsistentHash{vnodes: cfg.VirtualNodes}, nil // Update gives 0 its default
}

// Update rebuilds the ring.
func (b *ConsistentHash) Update(instances []discovery.Instance) {
	st := &ringState{insts: copyInstances(instances)}
	n := len(st.insts)
	if n == 0 {
		b.state.Store(st)
		return
	}
	total := 0
	for _, in := range st.insts {
		total += in.EffectiveWeight()
	}
	// Points per unit of weight: an instance's count depends on its own
	// weight alone (else a change of the others would resize it and move
	// keys between instances that stay), within the ring's bound.
	vnodes := b.vnodes
	if vnodes <= 0 { // the config's default, or made without NewConsistentHash
		vnodes = DefaultVirtualNodes
	}
	perWeight := float64(vnodes) / discovery.DefaultWeight
	if float64(total)*perWeight > maxRingPoints {
		perWeight = maxRingPoints / float64(total)
	}
	type point struct {
		h     uint64
		owner int32
	}
	pts := make([]point, 0, int(float64(total)*perWeight)+n)
	buf := make([]byte, 0, 64)
	for i, in := range st.insts {
		count := max(int(float64(in.EffectiveWeight())*perWeight+0.5), 1)
		for v := range count {
			buf = append(buf[:0], in.Address...)
			buf = append(buf, '#')
			buf = strconv.AppendInt(buf, int64(v), 10)
			pts = append(pts, point{hashBytes(buf), int32(i)})
		}
	}
	// Ties (rare) are broken by address, so that the ring does not depend
	// on the order of the instances.
	slices.SortFunc(pts, func(a, c point) int {
		switch {
		case a.h < c.h:
			return -1
		case a.h > c.h:
			return 1
		}
		if st.insts[a.owner].Address < st.insts[c.owner].Address {
			return -1
		}
		return 1
	})
	st.points = make([]uint64, len(pts))
	st.owner = make([]int32, len(pts))
	for k, p := range pts {
		st.points[k], st.owner[k] = p.h, p.owner
	}
	b.state.Store(st)
}

// Pick returns the instance owning key.
func (b *ConsistentHash) Pick(_ context.Context, key string) (discovery.Instance, error) {
	st := b.state.Load()
	if st == nil || len(st.insts) == 0 {
		return discovery.Instance{}, ErrNoInstance
	}
	if key == "" {
		// A random point: an instance's chance is its share of the
		// points, which follows its weight.
		return st.insts[st.owner[rand.IntN(len(st.owner))]], nil
	}
	h := hashString(key)
	// The first point >= h, wrapping around.
	lo, hi := 0, len(st.points)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if st.points[mid] < h {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(st.points) {
		lo = 0
	}
	return st.insts[st.owner[lo]], nil
}

// FNV-1a, then a finalizer that spreads nearby inputs over the whole range
// (FNV alone leaves keys that differ in their last byte close together).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return mix(h)
}

func hashBytes(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return mix(h)
}

// mix is the splitmix64 finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
