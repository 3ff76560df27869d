package client

import (
	"sync/atomic"

	"github.com/petrel-rpc/petrel/rpcinfo"
)

// resolver picks the address of each call. The static round robin over
// WithHostPorts is the only one today; service discovery and load balancing
// (the governance layer) will plug in here behind an option, with ri telling
// them what is called.
type resolver interface {
	pick(ri *rpcinfo.RPCInfo) (string, error)
}

// roundRobin cycles through a fixed list of addresses.
type roundRobin struct {
	addrs []string
	next  atomic.Uint32
}

func (r *roundRobin) pick(*rpcinfo.RPCInfo) (string, error) {
	if len(r.addrs) == 1 {
		return r.addrs[0], nil
	}
	i := r.next.Add(1) - 1
	return r.addrs[i%uint32(len(r.addrs))], nil
}
