//go:build linux || darwin || freebsd

package netpoll_test

import (
	"io"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestWriteTimeoutCountsBytesSent: a Write cut short by its deadline says
// how much of p went out, as io.Writer requires (0 <= n <= len(p), n bytes
// written): the peer gets exactly n bytes, and a caller that resumes or
// reports the write needs that n, not 0.
func TestWriteTimeoutCountsBytesSent(t *testing.T) {
	c, s := netpoll.DialTCP(t)
	p := make([]byte, 32<<20) // far more than the socket buffers hold
	c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Write(p)
	if !netpoll.IsTimeout(err) {
		t.Fatalf("Write of %d bytes to a peer that does not read: n %d, err %v; want a timeout", len(p), n, err)
	}
	c.Close()
	got := make(chan int64, 1)
	go func() {
		s.SetReadDeadline(time.Now().Add(5 * time.Second))
		k, _ := io.Copy(io.Discard, s)
		got <- k
	}()
	k := <-got
	if k == 0 {
		t.Fatal("the peer got no bytes; the test needs a socket buffer that takes some")
	}
	if int64(n) != k {
		t.Fatalf("Write returned n %d, but the peer got %d bytes", n, k)
	}
}
