package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
)

// echoServer is one implementation of the echo server: it answers every
// message of exactly size bytes with the same bytes, in order.
type echoServer interface {
	// Serve serves connections accepted from ln until Shutdown.
	Serve(ln net.Listener) error
	// Shutdown stops serving; Serve returns soon after.
	Shutdown(ctx context.Context) error
}

// servers maps an -impl name to the constructor of its echo server for
// messages of size bytes. Each implementation registers itself from the
// init function of its own file (server_<impl>.go).
var servers = map[string]func(size int) (echoServer, error){}

func register(name string, newServer func(size int) (echoServer, error)) {
	if _, dup := servers[name]; dup {
		panic("netbench: implementation registered twice: " + name)
	}
	servers[name] = newServer
}

// runServer is the server child: it listens on a free port of 127.0.0.1,
// prints "addr HOST:PORT" on stdout and serves until its stdin closes (the
// parent went away) or it gets SIGTERM/SIGINT.
func runServer(o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	srv, err := servers[o.impl](o.size)
	if err != nil {
		return fmt.Errorf("creating %s server: %w", o.impl, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if _, err := fmt.Fprintf(stdout, "%s%s\n", harness.AddrPrefix, ln.Addr()); err != nil {
		return fmt.Errorf("announcing the address: %w", err)
	}
	early, err := harness.Serve(stdin, serveErr, func(ctx context.Context) {
		if err := srv.Shutdown(ctx); err != nil {
			fmt.Fprintf(stderr, "netbench server: %s shutdown: %v\n", o.impl, err)
		}
		_ = ln.Close()
		select {
		case <-serveErr:
		case <-ctx.Done():
		}
	})
	if early {
		return fmt.Errorf("%s server stopped on its own: %w", o.impl, err)
	}
	return nil
}
