// Package codecsize sizes a request or result for the client's and the
// server's tracers.
package codecsize

import "github.com/petrel-rpc/petrel/codec/thrift"

// Of returns v.BLength(), or 0 if it panics (a hand-written codec's bug).
// The tracers size a call once it is over, its reply written or decoded:
// a codec that panics then has been answered or counted already, and
// sizing it must not skip the tracer's Finish.
func Of(v thrift.FastCodec) (n int) {
	defer func() {
		if recover() != nil {
			n = 0
		}
	}()
	return v.BLength()
}
