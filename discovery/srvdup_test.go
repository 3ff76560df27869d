package discovery_test

import (
	"context"
	"net"
	"testing"

	"github.com/petrel-rpc/petrel/discovery"
)

// Two SRV records for one target and port (a zone listing a host twice) make
// one instance with the records' weights summed: it gets the share of
// traffic the zone gives it, and every lookup gives the same list. Keeping
// one of the records, picked by an unstable sort, gave the instance either
// weight, and a Watch saw a change where there was none.
func TestDNSSRVDuplicateTargetsSumWeights(t *testing.T) {
	f := newFake()
	f.srv["_echo._tcp.example"] = []*net.SRV{
		{Target: "b.example.", Port: 2, Priority: 10, Weight: 20},
		{Target: "a.example.", Port: 1, Priority: 10, Weight: 10},
		{Target: "a.example", Port: 1, Priority: 10, Weight: 30},
		{Target: "a.example.", Port: 9, Priority: 10, Weight: 0},
	}
	d, _ := discovery.NewDNS(discovery.DNSConfig{SRV: true, LookupSRV: f.lookupSRV})
	for range 20 {
		list, err := d.Resolve(context.Background(), "_echo._tcp.example")
		if err != nil {
			t.Fatal(err)
		}
		want := []discovery.Instance{{Address: "a.example:1", Weight: 40}, {Address: "a.example:9", Weight: 1}, {Address: "b.example:2", Weight: 20}}
		if len(list) != len(want) {
			t.Fatalf("SRV instances = %+v, want %+v", list, want)
		}
		for i := range want {
			if list[i].Address != want[i].Address || list[i].Weight != want[i].Weight {
				t.Fatalf("SRV instances = %+v, want %+v", list, want)
			}
		}
	}
}

// Records no one can dial (port 0, no target, the "." of a service
// decidedly not available) are dropped before the lowest priority is
// chosen: a malformed record of priority 0 hid the usable records of
// priority 10, and a port-0 record became the instance "host:0".
func TestDNSSRVUnusableRecordsHideNothing(t *testing.T) {
	f := newFake()
	f.srv["_echo._tcp.example"] = []*net.SRV{
		{Target: "bad.example.", Port: 0, Priority: 0, Weight: 5},
		{Target: "", Port: 7, Priority: 0, Weight: 5},
		{Target: ".", Port: 7, Priority: 1, Weight: 5},
		{Target: "a.example.", Port: 1, Priority: 10, Weight: 10},
		{Target: "c.example.", Port: 0, Priority: 10, Weight: 10},
		{Target: "b.example.", Port: 2, Priority: 20, Weight: 10},
	}
	d, _ := discovery.NewDNS(discovery.DNSConfig{SRV: true, LookupSRV: f.lookupSRV})
	list, err := d.Resolve(context.Background(), "_echo._tcp.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Address != "a.example:1" {
		t.Fatalf("SRV instances = %+v, want only a.example:1", list)
	}
}
