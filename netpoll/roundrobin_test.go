//go:build linux || darwin || freebsd

package netpoll

import (
	"math"
	"net"
	"testing"
	"time"
)

// TestRoundRobinIndexInRangePastTwoToThe31 checks that the poller a
// registration goes to stays in range however many registrations came
// before. The index was int(next) % len(pollers): on a 32-bit platform
// (GOARCH=386, which make test runs) int(next) is negative once the count
// passes 2^31, and with 3 pollers the index was -2, which panicked in
// register with the manager's lock held. Run it with GOARCH=386 too.
func TestRoundRobinIndexInRangePastTwoToThe31(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, maxPollers} {
		for _, next := range []uint32{0, 1, math.MaxInt32, math.MaxInt32 + 1, math.MaxInt32 + 2, math.MaxUint32 - 1, math.MaxUint32} {
			want := int(uint64(next) % uint64(n))
			if got := roundRobin(next, n); got != want {
				t.Errorf("roundRobin(%d, %d) = %d, want %d", next, n, got, want)
			}
		}
	}

	// And through register: a dial after 2^31-1 registrations.
	before := NumPollers()
	defer SetNumPollers(before)
	SetNumPollers(3)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			s, err := ln.Accept()
			if err != nil {
				return
			}
			s.Close()
		}
	}()
	defaultManager.next.Store(math.MaxInt32)
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("a dial after 2^31-1 registrations panicked: %v", r)
		}
	}()
	for i := 0; i < 4; i++ {
		c, err := DialConnection("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}
