package loadbalance_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/loadbalance"
)

// TestWeightedRoundRobinManyInstances checks that Update does not take time
// quadratic in the number of instances: 16384 instances of equal weight
// make a cycle of 16384 picks, which Update computes in advance.
func TestWeightedRoundRobinManyInstances(t *testing.T) {
	const n = 1 << 14
	list := make([]discovery.Instance, n)
	for i := range list {
		list[i] = discovery.Instance{Address: fmt.Sprint(i)}
	}
	b := loadbalance.NewWeightedRoundRobin()
	start := time.Now()
	b.Update(list)
	// Linear work is about a millisecond, quadratic (n picks of n steps)
	// about half a second.
	if el := time.Since(start); el > 100*time.Millisecond {
		t.Fatalf("Update of %d instances of equal weight took %v, want under 100ms", n, el)
	}
	seen := make(map[string]bool, n)
	for range n {
		in, err := b.Pick(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		seen[in.Address] = true
	}
	if len(seen) != n {
		t.Fatalf("%d picks reached %d of %d instances of equal weight, want all", n, len(seen), n)
	}
}

// referenceWRR is the smooth weighted round robin run per instance, as
// specified: add each weight to its current weight, pick the highest
// (the first on ties), subtract the total from it.
func referenceWRR(weights []int, picks int) []int {
	cur := make([]int, len(weights))
	total := 0
	for _, w := range weights {
		total += w
	}
	out := make([]int, picks)
	for k := range out {
		best := 0
		for i, w := range weights {
			cur[i] += w
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out[k] = best
	}
	return out
}

// TestWeightedRoundRobinSequence checks the balancer's picks against the
// algorithm run per instance, for cycles computed in advance (a rotation
// of the reference cycle) and run live (its beginning).
func TestWeightedRoundRobinSequence(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		n := 2 + r.IntN(30)
		weights := make([]int, n)
		maxW := []int{3, 10, 3000}[trial%3]
		for i := range weights {
			weights[i] = 1 + r.IntN(maxW)
		}
		list := make([]discovery.Instance, n)
		index := make(map[string]int, n)
		for i := range list {
			list[i] = discovery.Instance{Address: fmt.Sprint(i), Weight: weights[i]}
			index[list[i].Address] = i
		}
		total, g := 0, 0
		for _, w := range weights {
			total += w
			for a, b := g, w; ; {
				if b == 0 {
					g = a
					break
				}
				a, b = b, a%b
			}
		}
		length := total / g
		b := loadbalance.NewWeightedRoundRobin()
		b.Update(list)
		picks := min(length, 3000)
		got := make([]int, picks)
		for k := range got {
			in, err := b.Pick(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			got[k] = index[in.Address]
		}
		if length > 1<<14 {
			if want := referenceWRR(weights, picks); !slices.Equal(got, want) {
				t.Fatalf("weights %v (live): picks %v, want %v", weights, got[:min(picks, 50)], want[:min(picks, 50)])
			}
			continue
		}
		ref := referenceWRR(weights, length)
		ref = append(ref, ref...)
		found := false
		for off := range length {
			if slices.Equal(ref[off:off+picks], got) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("weights %v: picks %v are not a rotation of the cycle %v", weights, got[:min(picks, 50)], ref[:min(length, 50)])
		}
	}
}
