package client

import (
	"context"
	"sync/atomic"
	"time"
)

// resolver picks the address of each call: the static round robin over
// WithHostPorts, or a balancer over a resolver's instances
// (option_discovery.go), which reads the call's rpcinfo and hash key in cs.
// ctx is the context the attempt runs under (a middleware's may end before
// the call's) and deadline the attempt's (zero: none): a pick that waits
// for addresses ends with the earlier of the two.
type resolver interface {
	pick(ctx context.Context, cs *callState, deadline time.Time) (string, error)
}

// roundRobin cycles through a fixed list of addresses.
type roundRobin struct {
	addrs []string
	next  atomic.Uint32
}

func (r *roundRobin) pick(context.Context, *callState, time.Time) (string, error) {
	if len(r.addrs) == 1 {
		return r.addrs[0], nil
	}
	i := r.next.Add(1) - 1
	return r.addrs[i%uint32(len(r.addrs))], nil
}
