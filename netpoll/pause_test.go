//go:build linux || darwin || freebsd

package netpoll

import (
	"sync"
	"testing"
	"time"
)

// TestPauseResumeNotLost: the poller's pause (paused set, read interest
// dropped, input re-checked) and a reader's resume must not interleave so
// that reading stays off with nobody paused. A resume that came just before
// the pause (the reader drained first) is made up for by the pause's
// re-check; one that comes while the pause runs waits for it (both change
// paused and the interest under op.wantMu). Once paused used to be set
// outside the lock, a resume between the two steps was a no-op and the
// pause then dropped the interest for good.
func TestPauseResumeNotLost(t *testing.T) {
	c, s := dialPair(t)
	c.SetReadTimeout(2 * time.Second)
	readable := func(step string) {
		t.Helper()
		s.Write([]byte("x"))
		if _, err := c.Next(1); err != nil {
			t.Fatalf("%s: byte in the socket never read: %v (paused %v, interest %d)", step, err, c.paused.Load(), c.op.want)
		}
		c.Release()
	}

	// The reader drained and found nothing paused; then the poller pauses.
	c.resumeReading()
	c.pauseReading()
	readable("resume before pause")

	// Pause and resume race; the interest lock orders them.
	c.op.wantMu.Lock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.pauseReading() }()
	go func() { defer wg.Done(); c.resumeReading() }()
	time.Sleep(10 * time.Millisecond)
	c.op.wantMu.Unlock()
	wg.Wait()
	readable("pause and resume at once")
}
