package loadbalance

import (
	"context"
	"errors"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
)

// Balancer picks an instance per call. Update and Pick may be called
// concurrently; Pick from many goroutines at once.
type Balancer interface {
	// Update replaces the instances picks choose from. The balancer keeps
	// its own copy; instances may be reused by the caller afterwards.
	Update(instances []discovery.Instance)
	// Pick chooses the instance for one call. key is the call's hash key
	// ("" when the call has none); only key-aware balancers use it. It
	// returns ErrNoInstance when there is no instance.
	Pick(ctx context.Context, key string) (discovery.Instance, error)
}

// Feedback is implemented by balancers that learn from the outcome of
// calls. The caller of Pick calls Done exactly once per successful Pick,
// when the call ends, with the picked instance's address, the call's
// latency and its error (nil on success).
type Feedback interface {
	Done(address string, latency time.Duration, err error)
}

// ErrNoInstance is returned by Pick when the balancer has no instance.
var ErrNoInstance = errors.New("loadbalance: no instance to pick")

// copyInstances copies the list (the tag maps are shared: instances treat
// them as read-only).
func copyInstances(list []discovery.Instance) []discovery.Instance {
	return append([]discovery.Instance(nil), list...)
}

// gcd of two positive numbers.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
