package limit_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/limit"
)

// TestTokenBucketStaleReadings: under overload a caller may be descheduled
// between reading the clock and calling Allow, so its time arrives well
// behind the others'. Such a reading must not give the next up-to-date
// caller the time between the two again: the rate must hold.
func TestTokenBucketStaleReadings(t *testing.T) {
	const rate = 10
	start := int64(time.Hour)
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

// TestTokenBucketStaleReadingsInARow: several callers descheduled between
// reading the clock and calling Allow, their readings arriving more than
// 100 ms late and in the order they were read. Allow took the first for a
// wall clock set back and followed it, refilling by the time between the
// stale readings, which had been counted up to the last up-to-date one:
// 216 admitted in 1.4 s at 10 per second. Times are monotonic now.
func TestTokenBucketStaleReadingsInARow(t *testing.T) {
	const rate = 10
	start := int64(time.Hour)
	b := limit.NewTokenBucket(rate, rate, start)
	for b.Allow(start) {
	}
	admitted := 0
	// One second: every 10 ms an up-to-date caller, then three whose
	// readings are 400, 300 and 200 ms old.
	const lag = 400 * time.Millisecond
	for now := start + int64(lag); now <= start+int64(lag)+int64(time.Second); now += int64(10 * time.Millisecond) {
		if b.Allow(now) {
			admitted++
		}
		for _, old := range []time.Duration{400 * time.Millisecond, 300 * time.Millisecond, 200 * time.Millisecond} {
			if b.Allow(now - int64(old)) {
				admitted++
			}
		}
	}
	// lag+1s passed since the bucket was drained: about 14 tokens.
	if max := rate + rate*int(lag/time.Millisecond)/1000 + 1; admitted > max {
		t.Fatalf("with runs of stale readings, %d admitted in %v at %d per second (want at most %d)",
			admitted, lag+time.Second, rate, max)
	}
}
