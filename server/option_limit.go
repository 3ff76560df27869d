package server

// WithMaxInFlight bounds the requests the server has read and not yet
// answered (oneway requests included). A request beyond it is answered at
// once, without decoding its arguments, with an ApplicationException whose
// message is the text of an rpcerr.Overloaded error (a Petrel client returns
// that code; the package doc gives the wire form), and is counted in
// Stats().RejectedInFlight. The rejection is decided and written by the
// goroutine that read the request, right after reading its header: no
// handler goroutine is scheduled and the arguments are not decoded. (In
// TestOverloadGoodput, at twice the capacity, the time from reading a
// rejected request to its rejection written was about 7 µs at the median
// and under 0.3 ms at most, the write system call being most of it.)
// With a handler of known service time T, n
// bounds the server's throughput to n/T requests per second and the
// queueing delay of an admitted request to nothing. Default 0: no limit.
//
// The limits (WithMaxConnections, WithMaxQPS, WithMaxInFlight) are
// applied by package limit.
func WithMaxInFlight(n int) Option {
	return optionFunc(func(c *config) { c.maxInFlight = n })
}
