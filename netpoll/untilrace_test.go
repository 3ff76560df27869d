//go:build linux

package netpoll_test

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestUntilWhileInputGrows: Until searches long lines while the poller
// appends to the input. A delimiter that arrives during a search must be
// found by the next one: a line is never returned merged with the next,
// and Until never waits for a delimiter it already has. (Searching up to
// the length read after the search skipped what came during it.)
func TestUntilWhileInputGrows(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const lineLen, lines = 1 << 20, 400 // 1 MiB of 'a', then '\n'
	line := append(bytes.Repeat([]byte{'a'}, lineLen), '\n')
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		p, err := ln.Accept()
		if err != nil {
			return
		}
		defer p.Close()
		for range lines {
			if _, err := p.Write(line); err != nil {
				return
			}
		}
		<-stop // open: the last delimiter must be found without a close
	}()
	c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadTimeout(5 * time.Second)
	r := c.Reader()
	for got := 0; got < lines; got++ {
		p, err := r.Until('\n')
		if err != nil {
			t.Fatalf("line %d: %v", got, err)
		}
		if len(p) != len(line) {
			t.Fatalf("line %d: Until returned %d bytes (%d delimiters), want one line of %d", got, len(p), bytes.Count(p, []byte{'\n'}), len(line))
		}
		r.Release()
	}
}

// TestDialLocalAddrPeerClosesAtOnce: a server that writes and closes at
// once (a refusal, a banner) lets the poller close a dialed connection's fd
// as soon as reading is on. Its local address must still be its own: taken
// after that, from the fd's number, it came back nil, or another socket's
// that had been given the number.
func TestDialLocalAddrPeerClosesAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			p, err := ln.Accept()
			if err != nil {
				return
			}
			p.Write([]byte(p.RemoteAddr().String() + "\n"))
			p.Close()
		}
	}()
	var dials, bad atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(time.Second)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
				if err != nil {
					continue
				}
				dials.Add(1)
				la := c.LocalAddr()
				seen, err := c.Reader().Until('\n')
				if la == nil || (err == nil && strings.TrimSuffix(string(seen), "\n") != la.String()) {
					if bad.Add(1) <= 3 {
						t.Errorf("LocalAddr %v; the server saw the client at %q (%v)", la, seen, err)
					}
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("LocalAddr wrong on %d of %d dials", bad.Load(), dials.Load())
	}
}
