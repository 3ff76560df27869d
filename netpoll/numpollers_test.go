//go:build linux

package netpoll_test

import (
	"math"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestSetNumPollersBounded: a number of pollers no machine could use is an
// error naming the value, and changes nothing (it used to be taken, and the
// next registration made a slice that long: a panic for math.MaxInt).
func TestSetNumPollersBounded(t *testing.T) {
	before := netpoll.NumPollers()
	for _, n := range []int{math.MaxInt, 1 << 20} {
		err := netpoll.SetNumPollers(n)
		if err == nil {
			netpoll.SetNumPollers(before)
			t.Fatalf("SetNumPollers(%d): no error", n)
		}
		if !strings.Contains(err.Error(), "SetNumPollers") {
			t.Errorf("SetNumPollers(%d): %v, want an error naming the call", n, err)
		}
	}
	if got := netpoll.NumPollers(); got != before {
		t.Fatalf("NumPollers after refused calls: %d, want %d", got, before)
	}
}
