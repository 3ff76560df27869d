package loadbalance_test

import (
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
