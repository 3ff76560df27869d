//go:build linux

package netpoll_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestDialPortOutOfRange: a port outside 0-65535 is an error naming the
// port and the address, given before any lookup or connect (it used to
// read "connect: invalid argument").
func TestDialPortOutOfRange(t *testing.T) {
	for _, tc := range []struct{ network, address, port string }{
		{"tcp", "127.0.0.1:99999", "99999"},
		{"tcp", "127.0.0.1:-1", "-1"},
		{"tcp4", "127.0.0.1:65536", "65536"},
		{"tcp6", "[::1]:70000", "70000"},
		{"tcp", "localhost:99999", "99999"},
		{"tcp", "127.0.0.1:99999999999999999999", "99999999999999999999"},
	} {
		c, err := netpoll.DialConnection(tc.network, tc.address, 0)
		if err == nil {
			c.Close()
			t.Errorf("dial %s %s: no error", tc.network, tc.address)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "port "+tc.port) || !strings.Contains(msg, tc.address) || strings.Contains(msg, "invalid argument") {
			t.Errorf("dial %s %s: %q, want an error naming port %s and the address", tc.network, tc.address, msg, tc.port)
		}
	}
}
