package loadbalance_test

import (
	"context"
	"fmt"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/loadbalance"
)

func ExampleNewConsistentHash() {
	b, _ := loadbalance.NewConsistentHash(loadbalance.ConsistentHashConfig{})
	all := []discovery.Instance{{Address: "10.0.0.1:8888"}, {Address: "10.0.0.2:8888"}, {Address: "10.0.0.3:8888"}}
	b.Update(all)
	first, _ := b.Pick(context.Background(), "user-42")
	again, _ := b.Pick(context.Background(), "user-42")
	fmt.Println("same instance for the same key:", first.Address == again.Address)

	// Another instance leaves: user-42 stays where it was.
	var rest []discovery.Instance
	dropped := false
	for _, in := range all {
		if !dropped && in.Address != first.Address {
			dropped = true // the first instance that does not own the key
			continue
		}
		rest = append(rest, in)
	}
	b.Update(rest)
	after, _ := b.Pick(context.Background(), "user-42")
	fmt.Println("kept after another instance left:", after.Address == first.Address)
	// Output:
	// same instance for the same key: true
	// kept after another instance left: true
}

func ExampleNewP2C() {
	b, _ := loadbalance.NewP2C(loadbalance.P2CConfig{})
	b.Update([]discovery.Instance{{Address: "fast:1"}, {Address: "slow:1"}})
	latency := map[string]time.Duration{"fast:1": time.Millisecond, "slow:1": 50 * time.Millisecond}
	count := map[string]int{}
	for range 1000 {
		in, _ := b.Pick(context.Background(), "")
		count[in.Address]++
		b.Done(in.Address, latency[in.Address], nil) // the call's outcome
	}
	fmt.Println("the fast instance got most calls:", count["fast:1"] > 900)
	// Output: the fast instance got most calls: true
}
