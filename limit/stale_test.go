package limit_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/limit"
)

// TestTokenBucketStaleReadings: under overload a caller may be descheduled
// between reading the clock and calling Allow, so its time arrives well
// behind the others' (more than the 100 ms Allow takes as the clock set
// back). Such a reading must not give the next up-to-date caller the
// time between the two again: the rate must hold.
func TestTokenBucketStaleReadings(t *testing.T) {
	const rate = 10
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	b := limit.NewTokenBucket(rate, rate, start)
	for b.Allow(start) {
	}
	const lag = 150 * time.Millisecond
	admitted := 0
	// One second: every 10 ms an up-to-date caller, then one whose
	// reading is lag old.
	for now := start + int64(lag); now <= start+int64(lag)+int64(time.Second); now += int64(10 * time.Millisecond) {
		if b.Allow(now) {
			admitted++
		}
		if b.Allow(now - int64(lag)) {
			admitted++
		}
	}
	// lag+1s passed since the bucket was drained: about 11 tokens.
	if max := rate + rate*int(lag/time.Millisecond)/1000 + 1; admitted > max {
		t.Fatalf("with every other reading %v old, %d admitted in %v at %d per second (want at most %d)",
			lag, admitted, lag+time.Second, rate, max)
	}
}
