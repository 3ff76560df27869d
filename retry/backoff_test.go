package retry_test

import (
	"math"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/retry"
)

// TestBackoffHugeValuesDoNotOverflow: doubling a large wait stops at Max
// instead of overflowing to a negative wait (which the middleware took as
// no wait at all): every retry's wait is in [0, Max] and never shrinks
// as retries go on.
func TestBackoffHugeValuesDoNotOverflow(t *testing.T) {
	cases := []retry.Backoff{
		{Base: 1 << 62, Max: math.MaxInt64, Jitter: -1},
		{Base: time.Second, Max: math.MaxInt64, Jitter: -1},
		{Base: retry.DefaultBackoffBase, Max: math.MaxInt64 - 1, Jitter: -1},
		{Base: math.MaxInt64, Jitter: -1},
	}
	for _, b := range cases {
		prev := time.Duration(0)
		for n := 1; n <= 100; n++ {
			d := b.Delay(n)
			if d < prev || d < 0 || d > b.Max && b.Max >= b.Base {
				t.Fatalf("%+v.Delay(%d) = %v (Delay(%d) = %v), want a wait in [0, Max] not below the previous one", b, n, d, n-1, prev)
			}
			prev = d
		}
	}
	// With jitter, the wait stays within [d*(1-Jitter), d]: here d is Max,
	// the largest Duration, so only the lower bound can be broken (an
	// overflow would make it negative).
	b := retry.Backoff{Base: 1 << 62, Max: math.MaxInt64, Jitter: 0.5}
	for range 100 {
		if d := b.Delay(5); d < math.MaxInt64/2 {
			t.Fatalf("%+v.Delay(5) = %v, want in [Max/2, Max]", b, d)
		}
	}
}
