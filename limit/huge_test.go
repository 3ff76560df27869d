package limit_test

import (
	"math"
	"testing"

	"github.com/petrel-rpc/petrel/limit"
)

// TestTokenBucketHugeRate: a rate too large for float64 to hold exactly
// (math.MaxInt, "no practical limit") admits every request and Rate
// returns it as given, not the negative number converting the float back
// to int gives.
func TestTokenBucketHugeRate(t *testing.T) {
	for _, rate := range []int{math.MaxInt, math.MaxInt - 1, 1<<53 + 1} {
		b := limit.NewTokenBucket(rate, 0, 0)
		if got := b.Rate(); got != rate {
			t.Errorf("NewTokenBucket(%d, 0, 0).Rate() = %d", rate, got)
		}
		for i := 0; i < 1000; i++ {
			if !b.Allow(0) {
				t.Fatalf("rate %d: request %d refused", rate, i)
			}
		}
	}
}
