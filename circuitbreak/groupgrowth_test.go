package circuitbreak_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/petrel-rpc/petrel/circuitbreak"
)

// A group of many instance breakers (a client of 5,000 servers) costs memory
// in proportion to its keys, made and removed one by one, as the instances
// of a deploy come and go. Copying the whole map on each new key and on each
// Remove cost the sum of all the sizes it went through: some 12.5 million
// entries copied for 5,000 keys, hundreds of megabytes of garbage made
// under the group's lock.
func TestGroupGrowthLinear(t *testing.T) {
	g, err := circuitbreak.NewGroup(circuitbreak.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256) + ":8888"
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, k := range keys {
		if g.Get(k) == nil {
			t.Fatalf("Get(%q) = nil", k)
		}
	}
	for _, k := range keys {
		g.Remove(k)
	}
	runtime.ReadMemStats(&after)
	if g.Len() != 0 {
		t.Fatalf("Len() = %d after removing every key", g.Len())
	}
	if made := after.TotalAlloc - before.TotalAlloc; made > 64<<20 {
		t.Fatalf("making and removing %d breakers allocated %d MB; want what the breakers themselves take (a few MB)", n, made>>20)
	}
}
