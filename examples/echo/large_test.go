package main

import (
	"testing"
	"time"
)

// TestRunLargestMessage: the load phase at the largest -size it accepts
// ends (the client reads the echo while its message is still going out: a
// client that wrote all of it before reading left the server's reply with
// nowhere to go once the buffers on the way were full, and both sides
// waited in Flush for ever).
func TestRunLargestMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 16 MiB messages for a second")
	}
	done := make(chan error, 1)
	go func() { done <- run(1, maxSize, time.Second) }()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run(1, %d, 1s): %v", maxSize, err)
		}
	case <-timer.C:
		t.Fatalf("run(1, %d, 1s) has not returned after 30s", maxSize)
	}
}
