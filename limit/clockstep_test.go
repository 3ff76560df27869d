package limit_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/limit"
)

// TestTokenBucketClockStepsBack: the times a server passes are wall-clock
// (unix nanoseconds), which an NTP step or a resumed VM can set back by
// hours. The bucket must go on refilling from the new time on, not refuse
// every request until the clock is back where it was.
func TestTokenBucketClockStepsBack(t *testing.T) {
	const rate = 10
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	b := limit.NewTokenBucket(rate, rate, start)
	for b.Allow(start) {
	}
	back := start - int64(time.Hour)
	if b.Allow(back) {
		t.Fatal("a clock stepped back refilled the bucket")
	}
	// One second on the new clock: a second's tokens.
	n := 0
	for b.Allow(back + int64(time.Second)) {
		n++
	}
	if n != rate {
		t.Fatalf("one second after the clock stepped back an hour, %d tokens, want %d", n, rate)
	}
	// Small disorder between callers (a time read just before another
	// caller's later one) neither re-bases the bucket nor adds tokens.
	now := back + 2*int64(time.Second)
	for b.Allow(now) {
	}
	admitted := 0
	for i := int64(0); i < 1000; i++ {
		// Each pair: a time 1 ms ahead, then one 0.5 ms behind it.
		t1 := now + (i+1)*int64(time.Millisecond)
		if b.Allow(t1) {
			admitted++
		}
		if b.Allow(t1 - int64(time.Millisecond)/2) {
			admitted++
		}
	}
	// 1 s of time passed: about rate tokens.
	if admitted < rate-1 || admitted > rate+1 {
		t.Fatalf("with callers' times out of order by 0.5 ms, %d admitted in 1 s at %d per second", admitted, rate)
	}
}
