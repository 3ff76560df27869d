//go:build linux

package netpoll_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestHoldOnDialedConnectionNoEffect: Hold has no effect on a dialed
// connection, as documented: its idle timeout still closes it (a hold used
// to count as busy and keep it open for good).
func TestHoldOnDialedConnectionNoEffect(t *testing.T) {
	c, _ := netpoll.DialTCP(t)
	c.Hold()
	defer c.Unhold()
	if err := c.SetIdleTimeout(20 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); c.IsActive(); {
		if time.Now().After(deadline) {
			t.Fatal("a held dialed connection with a 20ms idle timeout still open after 2s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
