//go:build linux

package netpoll_test

import (
	"math"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestHugeTimeouts: a read or write timeout of math.MaxInt64 means no limit
// in effect; now plus it used to overflow, so every blocking read or Flush
// timed out at once.
func TestHugeTimeouts(t *testing.T) {
	c, s := netpoll.DialTCP(t)
	c.SetReadTimeout(math.MaxInt64)
	readGetsByte(t, "SetReadTimeout(MaxInt64)", c, s)
	c.SetReadDeadline(time.Now().Add(time.Hour))
	readGetsByte(t, "SetReadTimeout(MaxInt64) and a deadline in an hour", c, s)
	flushCompletes(t, "SetWriteTimeout(MaxInt64)", func(c netpoll.Connection) { c.SetWriteTimeout(math.MaxInt64) })
	flushCompletes(t, "SetWriteTimeout(MaxInt64) and a deadline in an hour", func(c netpoll.Connection) {
		c.SetWriteTimeout(math.MaxInt64)
		c.SetWriteDeadline(time.Now().Add(time.Hour))
	})
}
