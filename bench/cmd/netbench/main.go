// Command netbench compares echo servers built on different network libraries
// (Petrel's netpoll, the Go standard library, cloudwego/netpoll) under one and
// the same load generator.
//
// The parent process starts two children of its own executable: an echo server
// of the chosen implementation pinned to one CPU with GOMAXPROCS=1, and a load
// generator pinned to another CPU with GOMAXPROCS=1. It samples the server's CPU
// time (/proc/PID/stat) and, when perf works, its syscalls over the measured
// window, and prints one JSON object on stdout. Logs go to stderr.
//
//	go run ./bench/cmd/netbench -impl gonet -size 1024 -conns 100 -duration 10s -json
//
// `netbench -compare` reads such JSON objects (one per line) on stdin and prints
// medians per implementation and the ratios of one implementation to the others;
// bench/scripts/netcompare.sh uses it. See bench/README.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// options are the command-line flags of every role.
type options struct {
	role     string // "" (parent), "server" or "client"; hidden
	impl     string
	size     int
	conns    int
	pipeline int
	rate     float64
	warmup   time.Duration
	duration time.Duration
	jsonOut  bool

	pin       bool
	serverCPU int
	clientCPU int
	perf      bool

	addr string // client role: the server's address; hidden

	list        bool
	compare     bool
	compareBase string
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("netbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.role, "role", "", "internal: the role of a child process (server or client)")
	fs.StringVar(&o.addr, "addr", "", "internal: the server address the client role dials")
	fs.StringVar(&o.impl, "impl", "gonet", "echo server implementation: "+strings.Join(implNames(), ", "))
	fs.IntVar(&o.size, "size", 1024, "message size in bytes (at least 8); the server echoes each message")
	fs.IntVar(&o.conns, "conns", 100, "number of client connections")
	fs.IntVar(&o.pipeline, "pipeline", 1, "requests in flight per connection (written in one write, answered in order)")
	fs.Float64Var(&o.rate, "rate", 0, "total request rate per second on an absolute schedule; 0 means closed loop")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "warm-up before the measured window")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "length of the measured window")
	fs.BoolVar(&o.jsonOut, "json", false, "print the result as one JSON object")
	fs.BoolVar(&o.pin, "pin", true, "pin the server and the client to one CPU each")
	fs.IntVar(&o.serverCPU, "server-cpu", 0, "CPU the server runs on")
	fs.IntVar(&o.clientCPU, "client-cpu", 1, "CPU the load generator runs on")
	fs.BoolVar(&o.perf, "perf", true, "count the server's syscalls with perf stat (null when perf is missing or fails)")
	fs.BoolVar(&o.list, "list", false, "print the available implementations, one a line")
	fs.BoolVar(&o.compare, "compare", false, "read result JSON lines on stdin and print medians and ratios")
	fs.StringVar(&o.compareBase, "compare-base", "petrel", "with -compare: the implementation whose ratios to the others are printed")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return o, nil
}

func (o *options) validate() error {
	if _, ok := servers[o.impl]; !ok {
		return fmt.Errorf("unknown -impl %q (available: %s)", o.impl, strings.Join(implNames(), ", "))
	}
	switch {
	case o.size < 8:
		return fmt.Errorf("-size %d: must be at least 8 (the first 8 bytes carry a request stamp)", o.size)
	case o.size > 16<<20:
		return fmt.Errorf("-size %d: at most 16 MiB", o.size)
	case o.conns < 1 || o.conns > 100000:
		return fmt.Errorf("-conns %d: must be in [1, 100000]", o.conns)
	case o.pipeline < 1 || o.pipeline > 4096:
		return fmt.Errorf("-pipeline %d: must be in [1, 4096]", o.pipeline)
	case o.size*o.pipeline > 64<<20:
		return fmt.Errorf("-size*-pipeline = %d: at most 64 MiB per batch", o.size*o.pipeline)
	}
	return harness.CheckTiming(o.rate, o.warmup, o.duration)
}

func implNames() []string { return slices.Sorted(maps.Keys(servers)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case o.list:
		for _, n := range implNames() {
			fmt.Fprintln(stdout, n)
		}
		return 0
	case o.compare:
		if err := compare(stdin, stdout, o.compareBase); err != nil {
			fmt.Fprintln(stderr, "netbench -compare:", err)
			return 1
		}
		return 0
	}
	if err := o.validate(); err != nil {
		fmt.Fprintln(stderr, "netbench:", err)
		return 2
	}
	return harness.RunRole("netbench", o.role, stderr,
		func() error { return runParent(o, stdout, stderr) },
		func() error { return runServer(o, stdin, stdout, stderr) },
		func() error { return runClient(o, stdin, stdout, stderr) })
}
