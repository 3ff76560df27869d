//go:build linux

package netpoll_test

import (
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestNegativeTimeoutsRejected: a negative read, write or idle timeout is an
// error that names the method and the value, and leaves the timeout as it
// was (it used to mean no limit at all, silently: a read bounded by a budget
// already spent waited for ever).
func TestNegativeTimeoutsRejected(t *testing.T) {
	c, _ := netpoll.DialTCP(t)
	c.SetReadTimeout(20 * time.Millisecond)
	for _, tc := range []struct {
		method string
		set    func(time.Duration) error
	}{
		{"SetReadTimeout", c.SetReadTimeout},
		{"SetWriteTimeout", c.SetWriteTimeout},
		{"SetIdleTimeout", c.SetIdleTimeout},
	} {
		err := tc.set(-time.Second)
		if err == nil || !strings.Contains(err.Error(), tc.method) || !strings.Contains(err.Error(), "-1s") {
			t.Errorf("%s(-1s): %v, want an error naming the method and the value", tc.method, err)
		}
	}
	within(t, "a read under the 20ms timeout set before the negative one", func() {
		if _, err := c.Reader().Next(1); err == nil {
			t.Error("read with nothing to read: no error, want a timeout")
		}
	})
}
