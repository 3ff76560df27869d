package loadbalance_test

import (
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
)

// TestP2CReturningAddressKeepsItsCallsInFlight: an address that leaves
// the list while calls to it are in flight and comes back (an etcd lease
// lost and replaced, a DNS answer that flapped) got a new node; the Dones
// of the calls picked before it left then landed on that node and
// canceled the calls picked since (the count is clamped at 0). P2C then
// took the address with 3 calls in flight for an idle one.
func TestP2CReturningAddressKeepsItsCallsInFlight(t *testing.T) {
	b := mustP2C(t)
	a := discovery.Instance{Address: "a:1"}
	c := discovery.Instance{Address: "c:1"}
	pickN := func(n int) {
		for range n {
			if _, err := b.Pick(ctx, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.Update([]discovery.Instance{a})
	pickN(5) // 5 calls to a in flight
	b.Update([]discovery.Instance{c})
	b.Update([]discovery.Instance{a}) // a is back
	pickN(3)                          // 3 new calls to a in flight
	for range 5 {
		b.Done(a.Address, time.Millisecond, nil) // the 5 old calls end
	}
	// Now a has 3 calls in flight and c none: P2C must pick c.
	b.Update([]discovery.Instance{a, c})
	for range 20 {
		in, err := b.Pick(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if in.Address == a.Address {
			t.Fatalf("picked %s, which has 3 calls in flight, over %s, which has none: the Dones of calls picked before %s left were counted against the calls picked since", a.Address, c.Address, a.Address)
		}
		b.Done(in.Address, time.Millisecond, nil)
	}
}
