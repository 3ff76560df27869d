package discovery

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// DefaultWeight is the weight of an [Instance] whose Weight is 0 or
// negative.
const DefaultWeight = 10

// MaxWeight is the largest weight balancers use; larger weights count as
// MaxWeight, so that sums of weights cannot overflow.
const MaxWeight = 1 << 16

// Instance is one server of a service.
type Instance struct {
	// Address is where to dial the server: "host:port" for TCP, a path for
	// Unix sockets.
	Address string
	// Weight is the instance's share of the calls relative to the others
	// (load balancers send it Weight/sum-of-weights of them). 0 or
	// negative means DefaultWeight; above MaxWeight counts as MaxWeight.
	Weight int
	// Tags are free-form labels (zone, version, ...). Resolvers and
	// balancers treat them as read-only; nil is fine.
	Tags map[string]string
}

// EffectiveWeight is the weight balancers use: Weight clamped to
// [1, MaxWeight], DefaultWeight when Weight is 0 or negative.
func (i Instance) EffectiveWeight() int {
	switch {
	case i.Weight <= 0:
		return DefaultWeight
	case i.Weight > MaxWeight:
		return MaxWeight
	}
	return i.Weight
}

// Resolver finds the instances of services.
type Resolver interface {
	// Resolve returns the current instances of service. An empty list with
	// a nil error means the service has no instance now.
	Resolve(ctx context.Context, service string) ([]Instance, error)
	// Watch follows the instances of service. ctx bounds only the setting
	// up of the watch; the Watcher lives until its Close.
	Watch(ctx context.Context, service string) (Watcher, error)
}

// Watcher follows the instances of one service. One goroutine at a time
// calls Next; Close may be called from any goroutine.
type Watcher interface {
	// Next returns the instances of the service: at once on the first
	// call, then each time they have changed since the list Next last
	// returned. It returns ctx's error when ctx ends first and
	// ErrWatcherClosed after Close; any other error is transient (a failed
	// lookup) and the caller may call Next again. The returned slice
	// belongs to the caller.
	Next(ctx context.Context) ([]Instance, error)
	// Close ends the watch and releases its resources; a Next waiting
	// returns ErrWatcherClosed.
	Close() error
}

// Registry is where servers announce themselves: a server registers its
// instance once it serves and deregisters it when it stops gracefully.
type Registry interface {
	// Register adds inst to service's instances (replacing an instance of
	// the same Address).
	Register(ctx context.Context, service string, inst Instance) error
	// Deregister removes the instance of service whose Address is
	// inst.Address. Deregistering an instance that is not registered is
	// not an error.
	Deregister(ctx context.Context, service string, inst Instance) error
}

// ErrWatcherClosed is returned by Watcher.Next after Close.
var ErrWatcherClosed = errors.New("discovery: watcher closed")

// Equal reports whether a and b hold the same instances (address, weight
// and tags), in any order.
func Equal(a, b []Instance) bool {
	if len(a) != len(b) {
		return false
	}
	as, bs := sorted(a), sorted(b)
	for i := range as {
		if as[i].Address != bs[i].Address || as[i].EffectiveWeight() != bs[i].EffectiveWeight() || !mapsEqual(as[i].Tags, bs[i].Tags) {
			return false
		}
	}
	return true
}

func sorted(list []Instance) []Instance {
	if slices.IsSortedFunc(list, byAddress) {
		return list
	}
	out := slices.Clone(list)
	slices.SortFunc(out, byAddress)
	return out
}

func byAddress(a, b Instance) int { return strings.Compare(a.Address, b.Address) }

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// clone copies list and each instance's tags, so that the caller owns it.
func clone(list []Instance) []Instance {
	out := make([]Instance, len(list))
	for i, in := range list {
		out[i] = in
		if in.Tags != nil {
			tags := make(map[string]string, len(in.Tags))
			for k, v := range in.Tags {
				tags[k] = v
			}
			out[i].Tags = tags
		}
	}
	return out
}
