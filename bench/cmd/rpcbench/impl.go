package main

import (
	"context"
	"net"
)

// An implementation is one framework's echo server and client.
type implementation struct {
	// serve starts the echo server on ln (a listener on a free port of
	// 127.0.0.1, which the server owns from then on). The server runs until
	// stop is called; done receives what its serve loop returned.
	serve func(ln net.Listener) (stop func(context.Context) error, done <-chan error, err error)
	// newClient builds the client side for conc callers of the server at
	// addr, the way a user of the framework would.
	newClient func(addr string, conc int) (echoClient, error)
}

// echoClient is the client side of an implementation.
type echoClient interface {
	// caller returns the function caller i (one goroutine) calls for each
	// request; the request carries action and msg, and the function returns
	// what the reply carried. Each caller gets its own function, which need
	// not be safe for concurrent use.
	caller(i int, action, msg string) (echoFunc, error)
	// Close releases everything the client holds.
	Close() error
}

// echoFunc makes one echo call.
type echoFunc func(ctx context.Context) (action, msg string, err error)

// impls maps an -impl name to its implementation; each registers itself
// from the init function of its own file (impl_<name>.go).
var impls = map[string]implementation{}

func register(name string, im implementation) {
	if _, dup := impls[name]; dup {
		panic("rpcbench: implementation registered twice: " + name)
	}
	impls[name] = im
}

// serveInBackground runs serve in a goroutine and reports its result on the
// returned channel.
func serveInBackground(serve func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- serve() }()
	return done
}
