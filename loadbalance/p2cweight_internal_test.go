package loadbalance

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/petrel-rpc/petrel/discovery"
)

// TestP2CInflightAcrossWeightChanges: calls are picked and reported
// (Done) while Update changes an instance's weight. Update copied the old
// node's in-flight count into a new node, then published it; a call whose
// Done landed on the old node between the copy and the publication left
// +1 on the new node for good. Once every call has ended, every node's
// in-flight count should be 0.
func TestP2CInflightAcrossWeightChanges(t *testing.T) {
	b, err := NewP2C(P2CConfig{})
	if err != nil {
		t.Fatal(err)
	}
	list := func(w int) []discovery.Instance {
		return []discovery.Instance{{Address: "a:1", Weight: w}, {Address: "b:1", Weight: 10}}
	}
	b.Update(list(10))
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				in, err := b.Pick(context.Background(), "")
				if err != nil {
					t.Error(err)
					return
				}
				b.Done(in.Address, 0, nil)
			}
		}()
	}
	for i := range 3000 {
		b.Update(list(10 + 10*(i%2))) // a warming-up weight, say
	}
	stop.Store(true)
	wg.Wait()
	st := b.state.Load()
	for i, in := range st.insts {
		if n := st.nodes[i].inflight.Load(); n != 0 {
			t.Errorf("%s: %d calls in flight after every call ended, want 0", in.Address, n)
		}
	}
}
