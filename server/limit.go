package server

import (
	"sync"
	"time"
)

// tokenBucket admits up to rate requests per second with bursts of up to
// rate: it holds at most rate tokens, gains rate tokens per second, and each
// request takes one.
type tokenBucket struct {
	mu     sync.Mutex // guards tokens and last
	rate   float64    // tokens per second; read-only
	tokens float64
	last   int64 // unix nanoseconds of the last refill
}

func newTokenBucket(rate int, now time.Time) *tokenBucket {
	return &tokenBucket{rate: float64(rate), tokens: float64(rate), last: now.UnixNano()}
}

// allow takes a token at time now (unix nanoseconds) and reports whether
// there was one.
func (b *tokenBucket) allow(now int64) bool {
	b.mu.Lock()
	if d := now - b.last; d > 0 {
		b.tokens = min(b.rate, b.tokens+float64(d)*b.rate/1e9)
		b.last = now
	}
	ok := b.tokens >= 1
	if ok {
		b.tokens--
	}
	b.mu.Unlock()
	return ok
}
