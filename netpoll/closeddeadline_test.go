//go:build linux

package netpoll_test

import (
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestDeadlinesAfterCloseFail: setting a deadline on a connection closed
// locally is an error (ErrConnClosed), as it is on a net.Conn; it used to
// succeed. Its addresses stay readable.
func TestDeadlinesAfterCloseFail(t *testing.T) {
	c, sc, _, _ := silentPair(t)
	for side, conn := range map[string]netpoll.Connection{"dialed": c, "accepted": sc} {
		conn.Close()
		for _, tc := range []struct {
			method string
			set    func(time.Time) error
		}{
			{"SetDeadline", conn.SetDeadline},
			{"SetReadDeadline", conn.SetReadDeadline},
			{"SetWriteDeadline", conn.SetWriteDeadline},
		} {
			if err := tc.set(time.Now().Add(time.Second)); !errors.Is(err, netpoll.ErrConnClosed) {
				t.Errorf("%s: %s after Close: %v, want ErrConnClosed", side, tc.method, err)
			}
		}
		if conn.LocalAddr() == nil || conn.RemoteAddr() == nil {
			t.Errorf("%s: after Close LocalAddr %v, RemoteAddr %v, want both", side, conn.LocalAddr(), conn.RemoteAddr())
		} else if conn.LocalAddr().String() == "" || conn.RemoteAddr().String() == "" {
			t.Errorf("%s: after Close LocalAddr %q, RemoteAddr %q, want both", side, conn.LocalAddr(), conn.RemoteAddr())
		}
	}
}

// TestDeadlinesAfterPeerAndLocalCloseFail: a connection closed locally after
// its peer closed it still says ErrConnClosed when a deadline is set, as its
// reads do; it used to say the peer's EOF, so TestDeadlinesAfterCloseFail
// failed whenever the peer's close was seen before the local one.
func TestDeadlinesAfterPeerAndLocalCloseFail(t *testing.T) {
	c, sc, _, _ := silentPair(t)
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for sc.IsActive() {
		if time.Now().After(deadline) {
			t.Fatal("the accepted side is still active 5s after the peer closed")
		}
		time.Sleep(time.Millisecond)
	}
	sc.Close()
	for _, tc := range []struct {
		method string
		set    func(time.Time) error
	}{
		{"SetDeadline", sc.SetDeadline},
		{"SetReadDeadline", sc.SetReadDeadline},
		{"SetWriteDeadline", sc.SetWriteDeadline},
	} {
		if err := tc.set(time.Now().Add(time.Second)); !errors.Is(err, netpoll.ErrConnClosed) {
			t.Errorf("%s after the peer's close and Close: %v, want ErrConnClosed", tc.method, err)
		}
	}
	if _, err := sc.Reader().Next(1); !errors.Is(err, netpoll.ErrConnClosed) {
		t.Errorf("Next after the peer's close and Close: %v, want ErrConnClosed", err)
	}
}
