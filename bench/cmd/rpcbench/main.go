// Command rpcbench compares RPC frameworks on one echo service: Petrel (with
// its long-connection pool over Framed, or its multiplexed pool over
// TTHeader), grpc-go with protobuf, and Apache Thrift Go. Each side is
// written the way a user of that framework would write it, from the
// framework's own generated code (bench/rpc).
//
// The parent process starts two children of its own executable: the echo
// server of the chosen implementation pinned to one CPU with GOMAXPROCS=1,
// and the client (-conc goroutines calling in a closed loop, or paced by
// -rate) pinned to another CPU with GOMAXPROCS=1. It samples the CPU time of
// both (/proc/PID/stat) over the measured window and prints one JSON object
// on stdout. Logs go to stderr.
//
//	go run ./cmd/rpcbench -impl petrel -size 1024 -conc 100 -duration 10s -json   # in bench/
//
// bench/scripts/rpccompare.sh runs the implementations interleaved and prints
// medians and ratios (rpcbench -compare). See bench/README.md.
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
	addr     string // client role: the server's address; hidden
	impl     string
	size     int
	conc     int
	rate     float64
	warmup   time.Duration
	duration time.Duration
	jsonOut  bool

	pin       bool
	serverCPU int
	clientCPU int

	// CPU profiles: in the parent, files the children write; in a child,
	// the file it writes.
	cpuProfile       string
	serverCPUProfile string
	clientCPUProfile string

	list    bool
	compare bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("rpcbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.role, "role", "", "internal: the role of a child process (server or client)")
	fs.StringVar(&o.addr, "addr", "", "internal: the server address the client role calls")
	fs.StringVar(&o.impl, "impl", "petrel", "implementation: "+strings.Join(implNames(), ", "))
	fs.IntVar(&o.size, "size", 1024, "bytes of the request's msg (echoed back)")
	fs.IntVar(&o.conc, "conc", 100, "concurrent callers (goroutines) in the client")
	fs.Float64Var(&o.rate, "rate", 0, "total requests per second on an absolute schedule; 0 means closed loop")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "load before the measured window (not counted)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "length of the measured window")
	fs.BoolVar(&o.jsonOut, "json", false, "print the result as one JSON object")
	fs.BoolVar(&o.pin, "pin", true, "pin the server and the client to one CPU each")
	fs.IntVar(&o.serverCPU, "server-cpu", 0, "CPU the server runs on")
	fs.IntVar(&o.clientCPU, "client-cpu", 1, "CPU the client runs on")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "internal: the CPU profile a child writes")
	fs.StringVar(&o.serverCPUProfile, "server-cpuprofile", "", "write the server child's CPU profile (its whole life) to this file")
	fs.StringVar(&o.clientCPUProfile, "client-cpuprofile", "", "write the client child's CPU profile (warm-up and window) to this file")
	fs.BoolVar(&o.list, "list", false, "print the implementations, one a line")
	fs.BoolVar(&o.compare, "compare", false, "read result JSON lines on stdin and print medians and the target ratios")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return o, nil
}

func (o *options) validate() error {
	if _, ok := impls[o.impl]; !ok {
		return fmt.Errorf("unknown -impl %q (available: %s)", o.impl, strings.Join(implNames(), ", "))
	}
	switch {
	case o.size < 0 || o.size > maxSize:
		return fmt.Errorf("-size %d: must be in [0, %d] (grpc-go refuses messages over 4 MiB by default, and the request holds more than msg)", o.size, maxSize)
	case o.conc < 1 || o.conc > 10000:
		return fmt.Errorf("-conc %d: must be in [1, 10000]", o.conc)
	}
	return harness.CheckTiming(o.rate, o.warmup, o.duration)
}

// maxSize is the largest -size: grpc-go refuses a received message over
// 4 MiB by default, and a request (or reply) encodes action "echo" and the
// length of msg besides msg, 11 bytes for a msg of 2 to 256 MiB; 64 bytes
// are left.
const maxSize = 4<<20 - 64

func implNames() []string { return slices.Sorted(maps.Keys(impls)) }

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
		if err := compare(stdin, stdout); err != nil {
			fmt.Fprintln(stderr, "rpcbench -compare:", err)
			return 1
		}
		return 0
	}
	if err := o.validate(); err != nil {
		fmt.Fprintln(stderr, "rpcbench:", err)
		return 2
	}
	return harness.RunRole("rpcbench", o.role, stderr,
		func() error { return runParent(o, stdout, stderr) },
		func() error { return runServer(o, stdin, stdout, stderr) },
		func() error { return runClient(o, stdin, stdout, stderr) })
}
