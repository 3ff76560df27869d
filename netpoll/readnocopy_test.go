//go:build linux || darwin || freebsd

package netpoll_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestReadKeepsNextSlices: the Reader's contract says slices from Next,
// Peek and Until "stay valid until Release". Connection.Read (net.Conn)
// released the input itself: a reader that takes a header with Next and
// the body with Read (as io.ReadFull does) found its header overwritten by
// the next input, the drained block having gone back to the pool and been
// booked again for it. Read now releases only when no such slice has been
// taken since the last Release.
func TestReadKeepsNextSlices(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: the pool hands the block straight back
	takes := []struct {
		name string
		take func(c netpoll.Connection) ([]byte, error)
	}{
		{"Next", func(c netpoll.Connection) ([]byte, error) { return c.Reader().Next(4) }},
		{"Peek", func(c netpoll.Connection) ([]byte, error) {
			p, err := c.Reader().Peek(4)
			if err != nil {
				return nil, err
			}
			return p, c.Reader().Skip(4)
		}},
		{"Until", func(c netpoll.Connection) ([]byte, error) { return c.Reader().Until('1') }},
	}
	for _, tc := range takes {
		t.Run(tc.name, func(t *testing.T) {
			c, peer := netpoll.DialTCP(t)
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			peer.Write([]byte("HDR1BODY"))
			hdr, err := tc.take(c)
			if err != nil {
				t.Fatal(err)
			}
			body := make([]byte, 4)
			if _, err := c.Read(body); err != nil { // as io.ReadFull would
				t.Fatal(err)
			}
			peer.Write([]byte("ZZZZZZZZ"))
			next, err := c.Reader().Next(8)
			if err != nil {
				t.Fatal(err)
			}
			if string(hdr) != "HDR1" || string(body) != "BODY" {
				t.Fatalf("header from %s is now %q, body %q (next input %q): Read released the header", tc.name, hdr, body, next)
			}
			// After a Release, Read releases again: the input read so
			// far is given back and the connection reads on.
			if err := c.Reader().Release(); err != nil {
				t.Fatal(err)
			}
			peer.Write([]byte("TAIL"))
			if n, err := c.Read(body); err != nil || string(body[:n]) != "TAIL" {
				t.Fatalf("Read after Release: %q, %v; want \"TAIL\"", body[:n], err)
			}
		})
	}
}
