package deadline

import (
	"math"
	"testing"
	"time"
)

// TestUnixNano: the zero time is none (0); a time before 1970 is long past
// (1), never none nor an overflow; one after 2262 is the latest held, not
// an overflow into the past.
func TestUnixNano(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		t    time.Time
		want int64
	}{
		{time.Time{}, 0},
		{time.Unix(0, 0), 1},
		{time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), 1},
		{time.Unix(0, 1), 1},
		{now, now.UnixNano()},
		{time.Unix(0, math.MaxInt64), math.MaxInt64},
		{now.Add(math.MaxInt64), math.MaxInt64},
		{time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxInt64},
	} {
		if got := UnixNano(c.t); got != c.want {
			t.Errorf("UnixNano(%v) = %d, want %d", c.t, got, c.want)
		}
	}
}
