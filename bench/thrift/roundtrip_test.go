package thriftbench_test

import (
	"reflect"
	"testing"
)

// TestPayloadsRoundTrip checks that the benchmarks measure equal work: each
// payload has the size its name says, Petrel's bytes decode with Apache,
// Apache's re-encoding has the same length (map order aside, the same bytes)
// and decodes with Petrel to the value Petrel started from.
func TestPayloadsRoundTrip(t *testing.T) {
	sizes := map[string][2]int{"small": {15_000, 25_000}, "large": {5_500_000, 6_500_000}, "maps": {15_000, 25_000}}
	for _, c := range loadPayloads(t) {
		t.Run(c.name, func(t *testing.T) {
			if r := sizes[c.name]; len(c.data) < r[0] || len(c.data) > r[1] {
				t.Errorf("%s payload is %d bytes, want %d..%d", c.name, len(c.data), r[0], r[1])
			}
			t.Logf("%s payload: %d bytes", c.name, len(c.data))
			// c.apache was read by Apache from Petrel's bytes.
			ab, err := apacheWrite(c.apache)
			if err != nil {
				t.Fatalf("apache write: %v", err)
			}
			if len(ab) != len(c.data) {
				t.Fatalf("apache wrote %d bytes, petrel %d", len(ab), len(c.data))
			}
			back := c.newPetrel()
			n, err := back.FastRead(ab)
			if err != nil || n != len(ab) {
				t.Fatalf("petrel read of apache's bytes: n=%d of %d, err %v", n, len(ab), err)
			}
			if !reflect.DeepEqual(back, c.petrel) {
				t.Fatal("petrel -> apache -> petrel changed the value")
			}
		})
	}
}
