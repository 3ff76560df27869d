package client

import (
	"sync/atomic"
)

// resolver picks the address of each call: the static round robin over
// WithHostPorts, or a balancer over a resolver's instances
// (option_discovery.go), which reads the call's rpcinfo and hash key in cs.
type resolver interface {
	pick(cs *callState) (string, error)
}

// roundRobin cycles through a fixed list of addresses.
type roundRobin struct {
	addrs []string
	next  atomic.Uint32
}

func (r *roundRobin) pick(*callState) (string, error) {
	if len(r.addrs) == 1 {
		return r.addrs[0], nil
	}
	i := r.next.Add(1) - 1
	return r.addrs[i%uint32(len(r.addrs))], nil
}
