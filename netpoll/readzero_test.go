//go:build linux || darwin || freebsd

package netpoll_test

import (
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestZeroLengthReadAfterClose: a Read into an empty slice of a connection
// closed locally fails with ErrConnClosed, as a net.Conn's does and as the
// Reader's Next(0) does; it used to report success. Before the close it
// returns 0 and no error.
func TestZeroLengthReadAfterClose(t *testing.T) {
	c, _ := netpoll.DialTCP(t)
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) of an open connection: %d, %v; want 0, nil", n, err)
	}
	c.Close()
	if n, err := c.Read(nil); n != 0 || !errors.Is(err, netpoll.ErrConnClosed) {
		t.Fatalf("Read(nil) after Close: %d, %v; want 0, ErrConnClosed", n, err)
	}
	if n, err := c.Read([]byte{}); n != 0 || !errors.Is(err, netpoll.ErrConnClosed) {
		t.Fatalf("Read of an empty slice after Close: %d, %v; want 0, ErrConnClosed", n, err)
	}
}
