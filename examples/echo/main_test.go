package main

import (
	"strings"
	"testing"
	"time"
)

// TestRunRefusesHugeFlags: sizes and counts whose load phase would not fit
// in memory are refused with the bounds, before anything is allocated.
func TestRunRefusesHugeFlags(t *testing.T) {
	for _, c := range []struct{ conns, size int }{
		{1, 100_000_000_000},
		{1_000_000, 1},
		{10000, 16 << 20},
	} {
		err := run(c.conns, c.size, time.Second)
		if err == nil || !strings.Contains(err.Error(), "want -size <=") {
			t.Errorf("-conns %d -size %d: %v, want the bounds", c.conns, c.size, err)
		}
	}
}
