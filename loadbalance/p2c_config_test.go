package loadbalance_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/loadbalance"
)

// TestP2CHugeHalfLife checks that a HalfLife so large that HalfLife ×
// instances does not fit in 64 bits neither panics nor wraps to a short
// half-life: it saturates (the averages then never decay).
func TestP2CHugeHalfLife(t *testing.T) {
	b, err := loadbalance.NewP2C(loadbalance.P2CConfig{HalfLife: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	list := instances(4) // 4 × 2^62 = 2^64: wraps to 0
	b.Update(list)
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Pick panicked with HalfLife 2^62 over 4 instances: %v", r)
		}
	}()
	for range 100 {
		in, err := b.Pick(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		b.Done(in.Address, time.Millisecond, nil)
	}
}

// TestP2CHugeErrorPenalty checks that an ErrorPenalty near the largest
// Duration does not overflow a failed call's sample into a negative
// latency, which made the failing instance look the fastest.
func TestP2CHugeErrorPenalty(t *testing.T) {
	b, err := loadbalance.NewP2C(loadbalance.P2CConfig{ErrorPenalty: math.MaxInt64})
	if err != nil {
		t.Fatal(err)
	}
	list := instances(2)
	b.Update(list)
	count := map[string]int{}
	const picks = 10_000
	for range picks {
		in, err := b.Pick(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		count[in.Address]++
		var callErr error
		if in.Address == list[1].Address {
			callErr = errors.New("fails")
		}
		b.Done(in.Address, time.Millisecond, callErr)
	}
	if share := float64(count[list[1].Address]) / picks; share > 0.2 {
		t.Errorf("with ErrorPenalty %v, the instance failing every call got %.3f of the calls", time.Duration(math.MaxInt64), share)
	}
}
