//go:build linux || darwin || freebsd

package netpoll

import (
	"errors"
	"runtime"
	"testing"
)

// TestPeerCloseReasonComesWithState: a reader that sees a connection no
// longer active, because its peer reset it, is told so (ErrConnReset), never
// ErrConnClosed, which means the connection was closed locally. The reason
// used to be stored after the state changed, so a reader in between got
// ErrConnClosed.
func TestPeerCloseReasonComesWithState(t *testing.T) {
	for i := 0; i < 2000; i++ {
		c, _ := dialPair(t)
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.peerClosed(ErrConnReset)
		}()
		for c.IsActive() {
			runtime.Gosched()
		}
		_, err := c.Next(1)
		<-done
		if !errors.Is(err, ErrConnReset) {
			t.Fatalf("connection %d: Next after the peer's reset: %v, want %v", i, err, ErrConnReset)
		}
	}
}
