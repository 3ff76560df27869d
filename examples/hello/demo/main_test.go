package main

import (
	"strings"
	"testing"
	"time"
)

// TestRunRefusesHugeFlags: counts and sizes past the bounds are refused,
// naming them, before a server starts or memory is taken.
func TestRunRefusesHugeFlags(t *testing.T) {
	for _, c := range []struct{ callers, size int }{
		{1_000_000_000, 64},
		{50, 1 << 40},
	} {
		err := run(c.callers, time.Second, "long", c.size)
		if err == nil || !strings.Contains(err.Error(), "want -callers <=") {
			t.Errorf("-callers %d -size %d: %v, want the bounds", c.callers, c.size, err)
		}
	}
}
