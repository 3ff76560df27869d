//go:build linux || darwin || freebsd

package netpoll

import (
	"net"
	"testing"
	"time"
)

// TestSetNumPollersLowersSpread checks that lowering the number of pollers
// takes effect: after SetNumPollers(4) then SetNumPollers(1), new
// connections all go to one poller, as NumPollers says, while the ones
// already registered stay on theirs. register used only ever to grow its
// list of pollers, so new connections went on spreading over 4 pollers
// while NumPollers said 1.
func TestSetNumPollersLowersSpread(t *testing.T) {
	before := NumPollers()
	defer SetNumPollers(before)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			s, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- s
		}
	}()
	var cs []*connection
	defer func() {
		for _, c := range cs {
			c.Close()
		}
		for range cs {
			(<-accepted).Close()
		}
	}()
	dialN := func(n int) []*connection {
		var out []*connection
		for i := 0; i < n; i++ {
			c, err := DialConnection("tcp", ln.Addr().String(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c.(*connection))
			out = append(out, c.(*connection))
		}
		return out
	}
	SetNumPollers(4)
	old := dialN(4)
	SetNumPollers(1)
	used := map[*poller]bool{}
	for _, c := range dialN(4) {
		used[c.op.poller] = true
	}
	if len(used) != 1 || NumPollers() != 1 {
		t.Fatalf("after SetNumPollers(1): 4 new connections on %d pollers, NumPollers says %d", len(used), NumPollers())
	}
	for i, c := range old {
		if !c.IsActive() {
			t.Fatalf("connection %d registered before SetNumPollers(1) is no longer active", i)
		}
	}
}
