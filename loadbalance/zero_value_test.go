package loadbalance_test

import (
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/loadbalance"
)

// TestP2CZeroValue: a P2C made without NewP2C (new(loadbalance.P2C)) takes
// the defaults, as a zero P2CConfig does, instead of a half-life of 0 that
// made Pick divide by zero.
func TestP2CZeroValue(t *testing.T) {
	b := new(loadbalance.P2C)
	b.Update(instances(3))
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Pick on a zero P2C panicked: %v", r)
		}
	}()
	count := map[string]int{}
	for range 300 {
		in, err := b.Pick(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		count[in.Address]++
		b.Done(in.Address, time.Millisecond, nil)
	}
	if len(count) != 3 {
		t.Fatalf("a zero P2C picked %v; want all 3 instances", count)
	}
}

// TestP2CZeroValuePenalty: a zero P2C adds DefaultErrorPenalty to a failed
// call's latency, so that an instance failing in 1ms does not look faster
// than one answering in 50ms. With two instances both are drawn at every
// pick, so the pick is the cheaper one: exact.
func TestP2CZeroValuePenalty(t *testing.T) {
	b := new(loadbalance.P2C)
	list := instances(2)
	b.Update(list)
	fail := errors.New("unavailable")
	// Seed both averages.
	b.Done(list[0].Address, time.Millisecond, fail)
	b.Done(list[1].Address, 50*time.Millisecond, nil)
	for i := range 20 {
		in, err := b.Pick(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if in.Address != list[1].Address {
			t.Fatalf("pick %d went to %s, which fails in 1ms (its error not penalized), not to %s (50ms, no error)", i, in.Address, list[1].Address)
		}
		if in.Address == list[0].Address {
			b.Done(in.Address, time.Millisecond, fail)
		} else {
			b.Done(in.Address, 50*time.Millisecond, nil)
		}
	}
}

// TestConsistentHashZeroValue: a ConsistentHash made without
// NewConsistentHash (new(loadbalance.ConsistentHash)) has the default
// virtual nodes, as a zero ConsistentHashConfig does, instead of one point
// per instance whatever its weight (keys spread unevenly, weights ignored):
// every key goes where a default balancer sends it.
func TestConsistentHashZeroValue(t *testing.T) {
	list := instances(5, 10, 40, 5)
	zero, def := new(loadbalance.ConsistentHash), mustCH(t)
	zero.Update(list)
	def.Update(list)
	differ := 0
	for _, k := range keys {
		a, err := zero.Pick(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := def.Pick(ctx, k)
		if a.Address != b.Address {
			differ++
		}
	}
	if differ != 0 {
		t.Fatalf("%d of %d keys go elsewhere with a zero ConsistentHash than with NewConsistentHash's defaults", differ, len(keys))
	}
}
