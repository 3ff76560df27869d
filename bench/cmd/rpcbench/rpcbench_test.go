package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
	"github.com/petrel-rpc/petrel/bench/internal/proc"
	"github.com/petrel-rpc/petrel/bench/rpc/pb"
)

// The tests run rpcbench as a real program: with asMainEnv set, the test
// binary is rpcbench (TestMain runs main's body), and so are the children it
// starts, since they inherit the environment.
const asMainEnv = "RPCBENCH_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

var wantKeys = []string{"impl", "size", "conc", "rate", "duration_s", "requests", "qps", "avg_us",
	"p50_us", "p99_us", "p999_us", "errors", "server_cpu_us_per_req", "client_cpu_us_per_req"}

// TestEndToEnd runs every implementation for 1 s with a few callers (and
// one paced run) and checks the JSON object it prints.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and measures for seconds")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pin := "-pin=true"
	if runtime.GOOS != "linux" || proc.AllowedCPUs() < 2 {
		pin = "-pin=false"
	}
	type run struct {
		impl string
		args []string
	}
	var runs []run
	for _, impl := range implNames() {
		runs = append(runs, run{impl, []string{"-conc", "4", "-size", "300"}})
	}
	runs = append(runs, run{"petrel-mux", []string{"-conc", "3", "-rate", "2000"}})
	for _, r := range runs {
		t.Run(r.impl+strings.Join(r.args, ""), func(t *testing.T) {
			args := append([]string{"-impl", r.impl, "-warmup", "200ms", "-duration", "1s", "-json", pin}, r.args...)
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), asMainEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("rpcbench %q: %v\nstderr:\n%s", args, err, stderr.String())
			}
			defer func() {
				if t.Failed() {
					t.Logf("stderr:\n%s", stderr.String())
				}
			}()
			if strings.Count(stdout.String(), "\n") != 1 {
				t.Fatalf("stdout is not one line:\n%s", stdout.String())
			}
			checkResult(t, stdout.Bytes(), r.impl)
			if pin == "-pin=true" && !strings.Contains(stderr.String(), "pinning verified at window end") {
				t.Errorf("no pinning verification in the log")
			}
		})
	}
}

func checkResult(t *testing.T, b []byte, impl string) {
	t.Helper()
	keys, vals, err := harness.DecodeObject(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, wantKeys) {
		t.Fatalf("keys %q, want %q", keys, wantKeys)
	}
	num := func(k string) float64 {
		n, ok := vals[k].(json.Number)
		if !ok {
			t.Fatalf("%s = %v (%T), want a number in %s", k, vals[k], vals[k], b)
		}
		f, _ := n.Float64()
		return f
	}
	if vals["impl"] != impl {
		t.Errorf("impl = %v, want %s", vals["impl"], impl)
	}
	if num("errors") != 0 {
		t.Errorf("errors = %v, want 0", num("errors"))
	}
	if num("requests") == 0 || num("qps") == 0 {
		t.Fatalf("no requests completed: %s", b)
	}
	if got := num("qps") * num("duration_s"); math.Abs(got-num("requests")) > 1 {
		t.Errorf("qps*duration_s = %v, requests = %v", got, num("requests"))
	}
	if d := num("duration_s"); math.Abs(d-1) > 0.01 {
		t.Errorf("duration_s = %v, want 1", d)
	}
	if !(num("p50_us") > 0 && num("p50_us") <= num("p99_us") && num("p99_us") <= num("p999_us")) {
		t.Errorf("percentiles out of order: %s", b)
	}
	if num("avg_us") <= 0 {
		t.Errorf("avg_us = %v, want > 0", num("avg_us"))
	}
	for _, k := range []string{"server_cpu_us_per_req", "client_cpu_us_per_req"} {
		// /proc counts whole clock ticks (10 ms): a busy second is many of
		// them, so neither side can show no CPU at all.
		if num(k) <= 0 {
			t.Errorf("%s = %v, want > 0", k, num(k))
		}
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-impl", "nope"},
		{"-conc", "0"},
		{"-size", "-1"},
		{"-rate", "-5"},
		{"-duration", "0s"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errb); code == 0 {
			t.Errorf("rpcbench %q exited 0, want an error", args)
		}
	}
	// flag parses these; a paced schedule of them is none, and the result's
	// JSON cannot hold them, so the run failed at its end.
	for _, rate := range []string{"NaN", "Inf", "-Inf"} {
		o, err := parseFlags([]string{"-rate", rate}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.validate(); err == nil {
			t.Errorf("validate accepted -rate %s", rate)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"-list"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("-list: exit %d", code)
	}
	if got := strings.Fields(out.String()); !slices.Equal(got, []string{"apache", "grpc", "petrel", "petrel-mux"}) {
		t.Errorf("-list = %q", got)
	}
}

func TestRequestFor(t *testing.T) {
	for _, size := range []int{0, 1, 5, 1024} {
		a, m := requestFor(3, size)
		_, m2 := requestFor(4, size)
		if a != "echo" || len(m) != size {
			t.Errorf("requestFor(3, %d) = %q, %d bytes", size, a, len(m))
		}
		if size >= len("caller-3:") && m == m2 {
			t.Errorf("callers 3 and 4 send the same %d-byte msg", size)
		}
	}
}

func TestCompare(t *testing.T) {
	line := func(impl string, qps, p99, cpu float64, rate float64) string {
		b, _ := json.Marshal(map[string]any{"impl": impl, "rate": rate, "qps": qps, "p99_us": p99,
			"avg_us": 1, "p50_us": 1, "p999_us": 1, "errors": 0, "server_cpu_us_per_req": cpu, "client_cpu_us_per_req": cpu})
		return string(b) + "\n"
	}
	in := "noise\n" +
		line("petrel", 300, 10, 2, 0) + line("grpc", 100, 40, 8, 0) + line("apache", 200, 20, 4, 0) + line("petrel-mux", 330, 30, 2, 0) +
		line("petrel", 100, 30, 2, 0) + line("grpc", 100, 40, 8, 0) + line("apache", 200, 20, 4, 0) + line("petrel-mux", 330, 30, 2, 0) +
		line("petrel", 200, 20, 2, 0)
	var out bytes.Buffer
	if err := compare(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(out.String()), " ")
	// petrel medians: qps 200, p99 20; grpc 100, 40; apache 200; mux 330.
	for _, want := range []string{
		"petrel 3 200 1 1 20 1 2 2 0",
		"petrel qps / grpc qps 2.000 (target >= 2.5) MISSED",
		"petrel qps / apache qps 1.000 (target >= 2) MISSED",
		"petrel p99_us / grpc p99_us 0.500 (target <= 0.5) met",
		"petrel-mux qps / petrel qps 1.650 (target >= 1.2) met",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(got, "server_cpu") && strings.Contains(got, "server_cpu_us_per_req / grpc") {
		t.Errorf("closed-loop runs show the paced CPU target:\n%s", out.String())
	}
	out.Reset()
	if err := compare(strings.NewReader(line("petrel", 100, 1, 3, 4e4)+line("petrel", 39000, 1, 3, 4e4)+line("grpc", 40000, 1, 12, 4e4)), &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(got, "petrel server_cpu_us_per_req / grpc server_cpu_us_per_req 0.250 (target <= 0.5) met") {
		t.Errorf("paced compare:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "note: 1 of 2 runs of petrel did not reach the offered rate") {
		t.Errorf("paced compare does not flag runs below the rate:\n%s", out.String())
	}
	if strings.Contains(out.String(), "runs of grpc did not reach") {
		t.Errorf("paced compare flags a run at the rate:\n%s", out.String())
	}
	if err := compare(strings.NewReader("nothing\n"), &out); err == nil {
		t.Error("compare of no results gave no error")
	}
}

// TestCompareRefusesMixedConfigurations: medians over runs of different
// configurations (a closed-loop file and a paced one concatenated, or two
// sizes) are not figures of either, so compare refuses them, as netbench's
// does.
func TestCompareRefusesMixedConfigurations(t *testing.T) {
	line := func(impl string, size, conc int, rate float64) string {
		b, _ := json.Marshal(map[string]any{"impl": impl, "size": size, "conc": conc, "rate": rate, "qps": 100,
			"avg_us": 1, "p50_us": 1, "p99_us": 1, "p999_us": 1, "errors": 0, "server_cpu_us_per_req": 1, "client_cpu_us_per_req": 1})
		return string(b) + "\n"
	}
	base := line("petrel", 1024, 100, 0) + line("grpc", 1024, 100, 0)
	for name, extra := range map[string]string{
		"rate": line("petrel", 1024, 100, 40000),
		"size": line("grpc", 64, 100, 0),
		"conc": line("grpc", 1024, 10, 0),
	} {
		var out bytes.Buffer
		err := compare(strings.NewReader(base+extra), &out)
		if err == nil || !strings.Contains(err.Error(), "different configurations") {
			t.Errorf("%s: compare of mixed runs: %v, want an error naming different configurations\n%s", name, err, out.String())
		}
	}
	var out bytes.Buffer
	if err := compare(strings.NewReader(base+line("grpc", 1024, 100, 0)), &out); err != nil {
		t.Errorf("compare of one configuration: %v", err)
	}
}

// TestMaxSizeFitsGRPC: the largest -size validate accepts must give a
// request (and reply) that grpc-go takes with its default 4 MiB limit on a
// received message; a msg of exactly 4 MiB was accepted before, and every
// grpc call of such a run failed (the encoded request is 11 bytes longer).
func TestMaxSizeFitsGRPC(t *testing.T) {
	const grpcDefaultMaxRecv = 4 << 20
	largest := -1
	for _, size := range []int{maxSize, 4 << 20} {
		o, err := parseFlags([]string{"-impl", "grpc", "-size", strconv.Itoa(size)}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if o.validate() == nil {
			largest = max(largest, size)
		}
	}
	if largest < 0 {
		t.Fatalf("validate refused -size %d", maxSize)
	}
	action, msg := requestFor(0, largest)
	if n := proto.Size(&pb.Request{Action: action, Msg: msg}); n > grpcDefaultMaxRecv {
		t.Errorf("-size %d is accepted, but its grpc request is %d bytes, over grpc-go's default limit %d", largest, n, grpcDefaultMaxRecv)
	}
}
