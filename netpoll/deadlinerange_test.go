//go:build linux

package netpoll_test

import (
	"io"
	"math"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// farFutures are deadlines past what int64 nanoseconds since 1970 can hold
// (the year 2262): each means, in effect, no deadline.
func farFutures() map[string]time.Time {
	return map[string]time.Time{
		"now+MaxInt64": time.Now().Add(math.MaxInt64),
		"year 2300":    time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
		"year 3000":    time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// pasts are deadlines that have passed, some of them before 1970 (or
// before 1678, out of int64 nanoseconds' reach too).
func pasts() map[string]time.Time {
	return map[string]time.Time{
		"an hour ago": time.Now().Add(-time.Hour),
		"1970-01-01":  time.Unix(0, 0),
		"1969-12-31":  time.Unix(-1, 0),
		"year 1000":   time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// readGetsByte starts a read of one byte on c, has the peer s send it 50ms
// later and fails t unless the read returns it.
func readGetsByte(t *testing.T, what string, c netpoll.Connection, s net.Conn) {
	t.Helper()
	res := make(chan error, 1)
	go func() {
		_, err := c.Reader().Next(1)
		res <- err
	}()
	send := time.NewTimer(50 * time.Millisecond)
	defer send.Stop()
	fail := time.NewTimer(2 * time.Second)
	defer fail.Stop()
	for {
		select {
		case <-send.C:
			s.Write([]byte("x"))
		case err := <-res:
			if err != nil {
				t.Errorf("%s: read: %v, want the byte the peer sent after 50ms", what, err)
			}
			return
		case <-fail.C:
			t.Fatalf("%s: read still blocked 2s after it began", what)
		}
	}
}

// flushCompletes fails t unless a Flush of 32 MiB (more than the socket
// holds, so the Flush waits) ends without error while the peer, from 50ms
// after the Flush began, reads it all.
func flushCompletes(t *testing.T, what string, setup func(netpoll.Connection)) {
	t.Helper()
	_, res := blockedFlush(t, setup, func(s net.Conn) {
		time.Sleep(50 * time.Millisecond) // the Flush has filled the socket
		io.CopyN(io.Discard, s, 32<<20)
	})
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case err := <-res:
		if err != nil {
			t.Errorf("%s: Flush: %v, want it to complete", what, err)
		}
	case <-timer.C:
		t.Fatalf("%s: Flush still blocked after 10s", what)
	}
}

// TestFarFutureDeadlines: a deadline after 2262 means no deadline in effect,
// as it does for a net.Conn; it used to overflow int64 nanoseconds and read
// as long past, so reads and flushes timed out at once.
func TestFarFutureDeadlines(t *testing.T) {
	for name, dl := range farFutures() {
		for _, set := range []string{"SetDeadline", "SetReadDeadline"} {
			c, s := netpoll.DialTCP(t)
			if set == "SetDeadline" {
				c.SetDeadline(dl)
			} else {
				c.SetReadDeadline(dl)
			}
			readGetsByte(t, set+"("+name+")", c, s)
		}
		for _, set := range []string{"SetDeadline", "SetWriteDeadline"} {
			flushCompletes(t, set+"("+name+")", func(c netpoll.Connection) {
				if set == "SetDeadline" {
					c.SetDeadline(dl)
				} else {
					c.SetWriteDeadline(dl)
				}
			})
		}
	}
}

// TestPastDeadlines: a deadline that has passed, even one before 1970 (the
// Unix epoch itself used to mean no deadline, and a year before 1678 one in
// 2169), times a blocking read and Flush out at once.
func TestPastDeadlines(t *testing.T) {
	for name, dl := range pasts() {
		c, _ := netpoll.DialTCP(t)
		c.SetReadDeadline(dl)
		within(t, "read with the read deadline "+name, func() {
			if _, err := c.Reader().Next(1); !netpoll.IsTimeout(err) {
				t.Errorf("read with the read deadline %s: %v, want a timeout", name, err)
			}
		})
		_, res := blockedFlush(t, func(c netpoll.Connection) { c.SetWriteDeadline(dl) }, func(net.Conn) {})
		wantFlushTimeout(t, res, 2*time.Second, "with the write deadline "+name)
	}
}
