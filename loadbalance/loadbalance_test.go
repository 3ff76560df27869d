package loadbalance_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/loadbalance"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var ctx = context.Background()

func mustCH(tb testing.TB) *loadbalance.ConsistentHash {
	b, err := loadbalance.NewConsistentHash(loadbalance.ConsistentHashConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func mustP2C(tb testing.TB) *loadbalance.P2C {
	b, err := loadbalance.NewP2C(loadbalance.P2CConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func balancers(tb testing.TB) map[string]loadbalance.Balancer {
	return map[string]loadbalance.Balancer{
		"wrr":        loadbalance.NewWeightedRoundRobin(),
		"random":     loadbalance.NewWeightedRandom(),
		"consistent": mustCH(tb),
		"p2c":        mustP2C(tb),
	}
}

// instances returns n instances "i0:1".."i<n-1>:1" with the given weights
// (cycled; none: default weight).
func instances(n int, weights ...int) []discovery.Instance {
	list := make([]discovery.Instance, n)
	for i := range list {
		list[i].Address = "i" + strconv.Itoa(i) + ":1"
		if len(weights) > 0 {
			list[i].Weight = weights[i%len(weights)]
		}
	}
	return list
}

func TestNoInstance(t *testing.T) {
	for name, b := range balancers(t) {
		if _, err := b.Pick(ctx, "k"); !errors.Is(err, loadbalance.ErrNoInstance) {
			t.Errorf("%s: Pick before Update = %v", name, err)
		}
		b.Update(instances(3))
		if _, err := b.Pick(ctx, "k"); err != nil {
			t.Errorf("%s: Pick = %v", name, err)
		}
		b.Update(nil)
		if _, err := b.Pick(ctx, "k"); !errors.Is(err, loadbalance.ErrNoInstance) {
			t.Errorf("%s: Pick after Update(nil) = %v", name, err)
		}
	}
}

func TestOneInstance(t *testing.T) {
	for name, b := range balancers(t) {
		b.Update([]discovery.Instance{{Address: "only:1", Weight: 3}})
		for i := range 10 {
			in, err := b.Pick(ctx, strconv.Itoa(i))
			if err != nil || in.Address != "only:1" || in.Weight != 3 {
				t.Fatalf("%s: Pick = %+v, %v", name, in, err)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if _, err := loadbalance.NewConsistentHash(loadbalance.ConsistentHashConfig{VirtualNodes: -1}); err == nil {
		t.Error("negative VirtualNodes accepted")
	}
	if _, err := loadbalance.NewP2C(loadbalance.P2CConfig{ErrorPenalty: -1}); err == nil {
		t.Error("negative ErrorPenalty accepted")
	}
	if _, err := loadbalance.NewP2C(loadbalance.P2CConfig{HalfLife: -1}); err == nil {
		t.Error("negative HalfLife accepted")
	}
	c := loadbalance.DefaultConsistentHashConfig()
	p := loadbalance.DefaultP2CConfig()
	if c.Validate() != nil || p.Validate() != nil || c.VirtualNodes != loadbalance.DefaultVirtualNodes || p.ErrorPenalty != loadbalance.DefaultErrorPenalty {
		t.Error("defaults do not validate or differ from the constants")
	}
}

func TestWeightedRoundRobinSmooth(t *testing.T) {
	b := loadbalance.NewWeightedRoundRobin()
	b.Update([]discovery.Instance{{Address: "a", Weight: 5}, {Address: "b", Weight: 1}, {Address: "c", Weight: 1}})
	var seq string
	for range 14 {
		in, _ := b.Pick(ctx, "")
		seq += in.Address
	}
	// The cycle starts at a random place: the sequence is a rotation of
	// aabacaa, twice.
	cycle := "aabacaa"
	ok := false
	for r := range len(cycle) {
		rot := cycle[r:] + cycle[:r]
		ok = ok || seq == rot+rot
	}
	if !ok {
		t.Fatalf("sequence %s, want a rotation of aabacaa twice", seq)
	}
	// Separate balancers do not all start at the same place.
	starts := map[string]bool{}
	for range 50 {
		b := loadbalance.NewWeightedRoundRobin()
		b.Update(instances(5))
		in, _ := b.Pick(ctx, "")
		starts[in.Address] = true
	}
	if len(starts) < 2 {
		t.Fatal("50 balancers over 5 instances all picked the same one first")
	}
}

func TestWeightedRoundRobinExact(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		weights []int
	}{
		{"equal", 7, nil},
		{"5-3-2", 3, []int{5, 3, 2}},
		{"gcd", 4, []int{20, 40, 60, 80}},
		// A cycle of 1000*100+4950 picks: too long to compute in advance,
		// run live.
		{"live", 100, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := instances(tc.n, tc.weights...)
			if tc.name == "live" {
				for i := range list {
					list[i].Weight = 1000 + i
				}
			}
			total := 0
			for _, in := range list {
				total += in.EffectiveWeight()
			}
			b := loadbalance.NewWeightedRoundRobin()
			b.Update(list)
			counts := map[string]int{}
			for range 2 * total {
				in, err := b.Pick(ctx, "")
				if err != nil {
					t.Fatal(err)
				}
				counts[in.Address]++
			}
			for _, in := range list {
				if got, want := counts[in.Address], 2*in.EffectiveWeight(); got != want {
					t.Fatalf("%s got %d picks of %d, want exactly %d", in.Address, got, 2*total, want)
				}
			}
		})
	}
}

func TestWeightedRandomDistribution(t *testing.T) {
	const picks = 200_000
	for _, weights := range [][]int{{1, 2, 3, 4}, nil, {1, 100, 7, 33, 2, 50, 50}, {1000, 1}} {
		list := instances(max(len(weights), 4), weights...)
		b := loadbalance.NewWeightedRandom()
		b.Update(list)
		counts := map[string]int{}
		for range picks {
			in, _ := b.Pick(ctx, "")
			counts[in.Address]++
		}
		total := 0
		for _, in := range list {
			total += in.EffectiveWeight()
		}
		for _, in := range list {
			want := float64(in.EffectiveWeight()) / float64(total)
			got := float64(counts[in.Address]) / picks
			// The standard deviation of each share is below 0.0012.
			if math.Abs(got-want) > 0.01 {
				t.Errorf("weights %v: %s got share %.4f, want %.4f ± 0.01", weights, in.Address, got, want)
			}
		}
	}
}

func keyOwners(tb testing.TB, b loadbalance.Balancer, keys int) []string {
	out := make([]string, keys)
	for k := range out {
		in, err := b.Pick(ctx, "user-"+strconv.Itoa(k))
		if err != nil {
			tb.Fatal(err)
		}
		out[k] = in.Address
	}
	return out
}

func TestConsistentHashMovement(t *testing.T) {
	const n, keys = 10, 100_000
	list := instances(n)
	b := mustCH(t)
	b.Update(list)
	before := keyOwners(t, b, keys)
	again := keyOwners(t, b, keys)
	share := map[string]int{}
	for k := range before {
		if before[k] != again[k] {
			t.Fatalf("key %d moved without a change", k)
		}
		share[before[k]]++
	}
	for _, in := range list {
		if s := float64(share[in.Address]) / keys; s < 0.5/n || s > 1.5/n {
			t.Errorf("%s owns %.3f of the keys, want about %.3f", in.Address, s, 1.0/n)
		}
	}
	worst := 0.0
	for leave := range n {
		rest := append(append([]discovery.Instance(nil), list[:leave]...), list[leave+1:]...)
		b.Update(rest)
		after := keyOwners(t, b, keys)
		moved := 0
		for k := range after {
			if after[k] != before[k] {
				moved++
				if before[k] != list[leave].Address {
					t.Fatalf("key %d moved from %s, which stayed", k, before[k])
				}
			}
		}
		frac := float64(moved) / keys
		if bound := 1.0/n + 0.05; frac > bound {
			t.Errorf("%s left: %.4f of the keys moved, bound %.4f", list[leave].Address, frac, bound)
		}
		worst = max(worst, frac)
	}
	t.Logf("one of %d instances left (each in turn): at most %.4f of %d keys moved (bound %.2f)", n, worst, keys, 1.0/n+0.05)
	// The instances back: every key goes home.
	b.Update(list)
	for k, a := range keyOwners(t, b, keys) {
		if a != before[k] {
			t.Fatalf("key %d did not go back to %s", k, before[k])
		}
	}
}

// TestConsistentHashMovementWeighted: with uneven weights too, an instance
// leaving or joining moves only keys it owned or comes to own; the keys of
// the instances that stay where they were.
func TestConsistentHashMovementWeighted(t *testing.T) {
	const keys = 20_000
	list := instances(6, 10, 20, 5, 40)
	b := mustCH(t)
	b.Update(list)
	before := keyOwners(t, b, keys)
	for leave := range list {
		rest := append(append([]discovery.Instance(nil), list[:leave]...), list[leave+1:]...)
		b.Update(rest)
		for k, a := range keyOwners(t, b, keys) {
			if a != before[k] && before[k] != list[leave].Address {
				t.Fatalf("%s (weight %d) left: key %d moved from %s, which stayed, to %s",
					list[leave].Address, list[leave].Weight, k, before[k], a)
			}
		}
	}
	// A newcomer takes keys only for itself.
	more := append(append([]discovery.Instance(nil), list...), discovery.Instance{Address: "new:1", Weight: 80})
	b.Update(more)
	for k, a := range keyOwners(t, b, keys) {
		if a != before[k] && a != "new:1" {
			t.Fatalf("new:1 joined: key %d moved from %s to %s", k, before[k], a)
		}
	}
}

func TestConsistentHashWeightsAndOrder(t *testing.T) {
	list := instances(4, 10, 10, 10, 30)
	b := mustCH(t)
	b.Update(list)
	owners := keyOwners(t, b, 60_000)
	count := map[string]int{}
	for _, a := range owners {
		count[a]++
	}
	if r := float64(count[list[3].Address]) / float64(count[list[0].Address]); r < 2 || r > 4.5 {
		t.Errorf("a 3x weight owns %.2fx the keys of a 1x weight", r)
	}
	// The ring does not depend on the order of the instances.
	rev := []discovery.Instance{list[3], list[2], list[1], list[0]}
	b2 := mustCH(t)
	b2.Update(rev)
	for k, a := range keyOwners(t, b2, 60_000) {
		if a != owners[k] {
			t.Fatalf("key %d: %s with one order, %s with another", k, owners[k], a)
		}
	}
	// Without a key the pick is random over all instances.
	seen := map[string]bool{}
	for range 1000 {
		in, _ := b.Pick(ctx, "")
		seen[in.Address] = true
	}
	if len(seen) != 4 {
		t.Errorf("keyless picks reached %d of 4 instances", len(seen))
	}
}

// TestConsistentHashKeylessWeighted: calls without a key are spread by
// weight (discovery.Instance.Weight), as keyed calls are.
func TestConsistentHashKeylessWeighted(t *testing.T) {
	const picks = 40_000
	list := instances(2, 10, 40)
	b := mustCH(t)
	b.Update(list)
	heavy := 0
	for range picks {
		in, err := b.Pick(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if in.Address == list[1].Address {
			heavy++
		}
	}
	if s := float64(heavy) / picks; s < 0.77 || s > 0.83 {
		t.Errorf("keyless picks: the instance of weight 40 (of 50) got %.3f of them, want 0.8", s)
	}
}

func TestP2CPrefersFaster(t *testing.T) {
	b := mustP2C(t)
	list := instances(3)
	b.Update(list)
	latency := map[string]time.Duration{list[0].Address: time.Millisecond, list[1].Address: 20 * time.Millisecond, list[2].Address: 20 * time.Millisecond}
	count := map[string]int{}
	const picks = 30_000
	for range picks {
		in, err := b.Pick(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		count[in.Address]++
		b.Done(in.Address, latency[in.Address], nil)
	}
	fast := float64(count[list[0].Address]) / picks
	t.Logf("fast instance share %.3f, slow ones %d and %d", fast, count[list[1].Address], count[list[2].Address])
	if fast < 0.6 {
		t.Errorf("the 1ms instance got %.3f of the calls against two 20ms ones", fast)
	}
	if count[list[1].Address] == 0 || count[list[2].Address] == 0 {
		t.Error("a slow instance was never tried again (no decay)")
	}
}

func TestP2CPrefersLessLoaded(t *testing.T) {
	b := mustP2C(t)
	list := instances(2)
	b.Update(list)
	// Calls to i1 never finish: its in-flight count grows.
	count := map[string]int{}
	for range 1000 {
		in, _ := b.Pick(ctx, "")
		count[in.Address]++
		if in.Address == list[0].Address {
			b.Done(in.Address, time.Millisecond, nil)
		}
	}
	if stuck := count[list[1].Address]; stuck > 20 {
		t.Errorf("the instance with calls stuck in flight got %d of 1000 picks", stuck)
	}
}

func TestP2CErrorsPenalized(t *testing.T) {
	b := mustP2C(t)
	list := instances(2)
	b.Update(list)
	count := map[string]int{}
	for range 10_000 {
		in, _ := b.Pick(ctx, "")
		count[in.Address]++
		var err error
		if in.Address == list[1].Address {
			err = errors.New("fails fast")
		}
		b.Done(in.Address, time.Millisecond, err)
	}
	if share := float64(count[list[1].Address]) / 10_000; share > 0.2 {
		t.Errorf("an instance failing every call got %.3f of them", share)
	}
}

func TestP2CKeepsLoadAcrossUpdate(t *testing.T) {
	b := mustP2C(t)
	list := instances(2)
	b.Update(list)
	latency := map[string]time.Duration{list[0].Address: time.Millisecond, list[1].Address: 50 * time.Millisecond}
	for range 20 {
		in, _ := b.Pick(ctx, "")
		b.Done(in.Address, latency[in.Address], nil)
	}
	// Rebuilt with the same instances (another order), the latency
	// averages stay: with no call finishing, the 1ms instance takes the
	// next 30 calls (30 in flight × 1ms < 50ms). Forgotten averages would
	// split them by calls in flight.
	b.Update([]discovery.Instance{list[1], list[0]})
	for range 30 {
		in, _ := b.Pick(ctx, "")
		if in.Address != list[0].Address {
			t.Fatalf("after Update, a call went to the 50ms instance: its average was forgotten")
		}
	}
	b.Done("gone:1", time.Second, nil) // ignored
}

// TestZeroAllocs checks that picks allocate nothing, also after the
// balancer was rebuilt.
func TestZeroAllocs(t *testing.T) {
	for name, b := range balancers(t) {
		fb, _ := b.(loadbalance.Feedback)
		for round, list := range [][]discovery.Instance{instances(10, 1, 2, 3), instances(7)} {
			b.Update(list)
			k := 0
			allocs := testing.AllocsPerRun(1000, func() {
				k++
				in, err := b.Pick(ctx, keys[k%len(keys)])
				if err != nil {
					t.Fatal(err)
				}
				if fb != nil {
					fb.Done(in.Address, time.Millisecond, nil)
				}
			})
			if allocs != 0 {
				t.Errorf("%s (update %d): %.1f allocations per pick", name, round, allocs)
			}
		}
	}
}

var keys = func() []string {
	out := make([]string, 1024)
	for i := range out {
		out[i] = "key-" + strconv.Itoa(i)
	}
	return out
}()

func TestConcurrentPickAndUpdate(t *testing.T) {
	for name, b := range balancers(t) {
		t.Run(name, func(t *testing.T) {
			b.Update(instances(5))
			fb, _ := b.(loadbalance.Feedback)
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						in, err := b.Pick(ctx, keys[(g*7+i)%len(keys)])
						if err != nil {
							t.Error(err)
							return
						}
						if fb != nil {
							fb.Done(in.Address, time.Microsecond, nil)
						}
					}
				}()
			}
			for i := range 50 {
				b.Update(instances(3+i%5, i%4+1))
			}
			close(stop)
			wg.Wait()
		})
	}
}

func BenchmarkPick(b *testing.B) {
	for _, name := range []string{"wrr", "random", "consistent", "p2c"} {
		b.Run(name, func(b *testing.B) {
			lb := balancers(b)[name]
			lb.Update(instances(10, 1, 2, 3, 5))
			fb, _ := lb.(loadbalance.Feedback)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				in, _ := lb.Pick(ctx, keys[i&1023])
				if fb != nil {
					fb.Done(in.Address, time.Millisecond, nil)
				}
			}
		})
	}
}

func ExampleNewWeightedRoundRobin() {
	b := loadbalance.NewWeightedRoundRobin()
	b.Update([]discovery.Instance{{Address: "a:1", Weight: 5}, {Address: "b:1", Weight: 1}, {Address: "c:1", Weight: 1}})
	// Every 7 picks (the cycle: a a b a c a a, from a random place in it):
	count := map[string]int{}
	for range 7 {
		in, _ := b.Pick(context.Background(), "")
		count[in.Address]++
	}
	fmt.Println(count["a:1"], count["b:1"], count["c:1"])
	// Output: 5 1 1
}

// TestP2CDuplicateAddress: an address listed twice (WithHostPorts("a",
// "a", "b")) is one instance with two entries: a Done for it ends the call
// whichever entry was picked, so that neither entry keeps a call in flight
// for ever, and it gets the two entries' share (2/3 here).
func TestP2CDuplicateAddress(t *testing.T) {
	b := mustP2C(t)
	list := instances(2)
	b.Update([]discovery.Instance{list[0], list[0], list[1]})
	const picks = 6000
	count := map[string]int{}
	for range picks {
		in, _ := b.Pick(ctx, "")
		count[in.Address]++
		b.Done(in.Address, time.Millisecond, nil)
	}
	if share := float64(count[list[0].Address]) / picks; share < 0.6 || share > 0.73 {
		t.Errorf("the address listed twice got %.3f of the picks, want about 2/3", share)
	}
}
