package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/pprof"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
)

// runServer is the server child: it serves the implementation's echo
// service on a free port of 127.0.0.1, prints "addr HOST:PORT" on stdout
// and serves until its stdin closes (the parent went away) or it gets
// SIGTERM/SIGINT.
func runServer(o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	stopProfile, err := startProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	addr := ln.Addr().String()
	stop, serveErr, err := impls[o.impl].serve(ln)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("starting the %s server: %w", o.impl, err)
	}
	if _, err := fmt.Fprintf(stdout, "%s%s\n", harness.AddrPrefix, addr); err != nil {
		return fmt.Errorf("announcing the address: %w", err)
	}
	early, err := harness.Serve(stdin, serveErr, func(ctx context.Context) {
		if err := stop(ctx); err != nil {
			fmt.Fprintf(stderr, "rpcbench server: %s stop: %v\n", o.impl, err)
		}
	})
	if early {
		return fmt.Errorf("the %s server stopped on its own: %v", o.impl, err)
	}
	return nil
}

// startProfile starts a CPU profile written to path ("" : none) and returns
// the function that ends it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
