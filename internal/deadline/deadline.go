// Package deadline converts deadlines to and from the int64 UnixNano form in
// which netpoll's connections and the client's call context hold them (an
// atomic word, or a field read without a time.Time's size).
package deadline

import (
	"math"
	"time"
)

// Deadlines are held as UnixNano, which int64 holds only from 1678 to 2262.
var (
	first = time.Unix(0, 1)             // the earliest held as itself
	last  = time.Unix(0, math.MaxInt64) // the latest held as itself
)

// UnixNano returns deadline t as held: 0 for the zero time (no deadline), 1
// for any time up to 1970 (long past, not none), math.MaxInt64 for any time
// after 2262 (in effect none), t.UnixNano() otherwise.
func UnixNano(t time.Time) int64 {
	switch {
	case t.IsZero():
		return 0
	case t.Before(first):
		return 1
	case t.After(last):
		return math.MaxInt64
	}
	return t.UnixNano()
}
