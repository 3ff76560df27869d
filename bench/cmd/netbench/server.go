package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
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

// addrPrefix starts the line on which a server child announces its address.
const addrPrefix = "addr "

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
	if _, err := fmt.Fprintf(stdout, "%s%s\n", addrPrefix, ln.Addr()); err != nil {
		return fmt.Errorf("announcing the address: %w", err)
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop)
	parentGone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(parentGone)
	}()

	select {
	case err := <-serveErr:
		return fmt.Errorf("%s server stopped on its own: %w", o.impl, err)
	case <-stop:
	case <-parentGone:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "netbench server: %s shutdown: %v\n", o.impl, err)
	}
	_ = ln.Close()
	select {
	case <-serveErr:
	case <-ctx.Done():
	}
	return nil
}

// readAddr reads the "addr" line a server child prints.
func readAddr(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the server's address: %w", err)
	}
	if len(line) <= len(addrPrefix) || line[:len(addrPrefix)] != addrPrefix {
		return "", errors.New("server printed " + fmt.Sprintf("%q", line) + ", want \"addr HOST:PORT\"")
	}
	return line[len(addrPrefix) : len(line)-1], nil
}
