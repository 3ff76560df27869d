package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/format"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestGenHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"gen", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("gen -h exited %d", code)
	}
	for _, want := range []string{"-out", "-module", "-I", "-keep-unknown", "namespace go"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("gen -h does not mention %q:\n%s", want, errb.String())
		}
	}
	if code := run(nil, &out, &errb); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
	if code := run([]string{"gen", "x.thrift"}, &out, &errb); code != 2 {
		t.Errorf("gen without -out/-module: exit %d, want 2", code)
	}
}

func TestGenParseError(t *testing.T) {
	dir := t.TempDir()
	idl := filepath.Join(dir, "bad.thrift")
	if err := os.WriteFile(idl, []byte("struct A {\n  1: i32 x\n  2: nosuch y\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"gen", "-out", filepath.Join(dir, "out"), "-module", "m", idl}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errb.String())
	}
	if !strings.HasPrefix(errb.String(), idl+":3:6: ") {
		t.Errorf("error not reported as file:line:col: message:\n%s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Errorf("output written despite the error")
	}
}

func TestGenWritesIncludedPackages(t *testing.T) {
	dir := t.TempDir()
	got := mustGen(t, includesArgs(dir), dir)
	if len(got) != 3 {
		t.Fatalf("generated %v, want three packages (main and its two includes)", got)
	}
	main, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(got[len(got)-1])))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(main, []byte(`"example.com/out/`)) {
		t.Errorf("%s does not import its includes under the -module path", got[len(got)-1])
	}
}

// bigIDL returns an IDL of n structs and m services of 5 methods each.
func bigIDL(n, m int) []byte {
	var b bytes.Buffer
	b.WriteString("namespace go big.idl\n\nenum Kind { A, B, C }\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "// S%d is struct number %d.\nstruct S%d {\n", i, i, i)
		fmt.Fprintf(&b, "  1: required i64 id\n  2: string name = \"s\"\n  3: optional double score\n  4: list<i32> values\n")
		fmt.Fprintf(&b, "  5: map<string, list<i64>> index\n  6: set<string> tags\n  7: optional Kind kind\n  8: binary blob\n")
		if i > 0 {
			fmt.Fprintf(&b, "  9: optional S%d prev\n  10: list<S%d> prevs\n", i-1, i-1)
		}
		b.WriteString("}\n\n")
	}
	for i := 0; i < m; i++ {
		fmt.Fprintf(&b, "service Svc%d {\n", i)
		for j := 0; j < 5; j++ {
			k := (i*5 + j) % n
			fmt.Fprintf(&b, "  S%d call%d(1: S%d req, 2: i32 flags) throws (1: Oops oops)\n", k, j, k)
		}
		b.WriteString("}\n\n")
	}
	b.WriteString("exception Oops { 1: string why }\n")
	return b.Bytes()
}

// TestGenSpeed times `petrel gen` (a built binary) on 200 structs and 20
// services. It takes about 0.2 s; the bound of 3 s catches a walk gone
// superlinear (see internal/gen's typeWalk), not a slow machine: 1 s failed
// once with the load average at 6 on 2 cores.
func TestGenSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the petrel command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "petrel")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	idl := filepath.Join(dir, "big.thrift")
	if err := os.WriteFile(idl, bigIDL(200, 20), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := exec.Command(bin, "gen", "-out", filepath.Join(dir, "out"), "-module", "example.com/big", idl).CombinedOutput()
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("petrel gen: %v\n%s", err, out)
	}
	gen, err := os.ReadFile(filepath.Join(dir, "out", "big", "idl", "big.go"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(gen, []byte(") FastRead(b []byte)")); n != 200+1+20*5*2 {
		t.Errorf("%d structs generated, want %d", n, 200+1+20*5*2)
	}
	t.Logf("petrel gen: 200 structs, 20 services, %d bytes of Go in %v", len(gen), elapsed)
	if elapsed > 3*time.Second {
		t.Errorf("petrel gen took %v, want under 3s", elapsed)
	}
	// Most of the output is laid out by the generator itself: check it is
	// what gofmt prints.
	if formatted, err := format.Source(gen); err != nil || !bytes.Equal(formatted, gen) {
		t.Errorf("the generated file is not gofmt-formatted (err %v)", err)
	}
}

// TestGenScaffold checks -service: main.go and handler.go are written once
// and then left alone, and an unknown service is an error naming the
// file's services.
func TestGenScaffold(t *testing.T) {
	dir := t.TempDir()
	idl := filepath.Join(dir, "hello.thrift")
	src := "namespace go demo.hello\nservice Greeter { string greet(1: string name) }\nservice Other {}\n"
	if err := os.WriteFile(idl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := []string{"gen", "-out", out, "-module", "example.com/greeter", "-service", "Greeter", idl}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, f := range []string{"main.go", "handler.go", "demo/hello/hello.go"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if !strings.Contains(stdout.String(), "wrote "+filepath.Join(out, "handler.go")) {
		t.Errorf("stdout does not say handler.go was written:\n%s", stdout.String())
	}
	handler, err := os.ReadFile(filepath.Join(out, "handler.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package main", "func (h *handler) Greet(ctx context.Context, name string) (r string, err error)", `hello "example.com/greeter/demo/hello"`} {
		if !bytes.Contains(handler, []byte(want)) && !bytes.Contains(handler, []byte(strings.TrimPrefix(want, "hello "))) {
			t.Errorf("handler.go lacks %q:\n%s", want, handler)
		}
	}

	// The user edits the handler; a second run keeps it and says so.
	edited := append(handler, []byte("\n// edited\n")...)
	if err := os.WriteFile(filepath.Join(out, "handler.go"), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr.String())
	}
	if got, _ := os.ReadFile(filepath.Join(out, "handler.go")); !bytes.Equal(got, edited) {
		t.Errorf("handler.go was overwritten")
	}
	for _, f := range []string{"main.go", "handler.go"} {
		if !strings.Contains(stdout.String(), filepath.Join(out, f)+" exists; left as it is") {
			t.Errorf("second run does not say %s was left alone:\n%s", f, stdout.String())
		}
	}

	stderr.Reset()
	bad := []string{"gen", "-out", out, "-module", "example.com/greeter", "-service", "Nope", idl}
	if code := run(bad, &stdout, &stderr); code != 1 {
		t.Fatalf("unknown service: exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), `no service "Nope"; the file declares Greeter, Other`) {
		t.Errorf("unknown service error: %s", stderr.String())
	}

	// An unknown service is found before anything is written.
	fresh := filepath.Join(dir, "fresh")
	bad = []string{"gen", "-out", fresh, "-module", "example.com/greeter", "-service", "Nope", idl}
	if code := run(bad, &stdout, &stderr); code != 1 {
		t.Fatalf("unknown service: exit %d, want 1", code)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Errorf("unknown service: %s was written although gen failed", fresh)
	}
}

// TestGenFlagsAfterFile checks that flags written after the IDL file (the Go
// flag package stops at the first argument that is not a flag) are reported
// as such, not as a count of IDL files.
func TestGenFlagsAfterFile(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"gen", "x.thrift", "-out", "o", "-module", "m"}, &out, &errb)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	first, _, _ := strings.Cut(errb.String(), "\n")
	if !strings.Contains(first, `flag -out comes after the IDL file x.thrift`) || !strings.Contains(first, "before") {
		t.Errorf("error does not say the flags must come before the file:\n%s", first)
	}
	errb.Reset()
	if code := run([]string{"gen", "-out", "o", "-module", "m", "a.thrift", "b.thrift"}, &out, &errb); code != 2 {
		t.Fatalf("two files: exit %d, want 2", code)
	}
	if first, _, _ := strings.Cut(errb.String(), "\n"); !strings.Contains(first, `want exactly one IDL file, got 2: a.thrift b.thrift`) {
		t.Errorf("two files: %s", first)
	}
}

// TestScaffoldServerRuns builds the -service skeleton's server as a user
// would and runs it: on a taken port it exits 1 saying so without claiming
// to serve; on port 0 it announces the port it listens on, answers there,
// and on SIGTERM reports that Stop has finished and exits 0.
func TestScaffoldServerRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the skeleton with the go command")
	}
	if runtime.GOOS == "windows" {
		t.Skip("sends SIGTERM")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	idl := filepath.Join(dir, "greeter.thrift")
	if err := os.WriteFile(idl, []byte("namespace go greeter\nservice Greeter { string greet(1: string name) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gomod := fmt.Sprintf("module example.com/you\n\ngo 1.26.0\n\nrequire github.com/petrel-rpc/petrel v0.0.0\n\nreplace github.com/petrel-rpc/petrel => %s\n", root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	// The runtime module's checksums, so that the go command need not ask
	// the checksum database.
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-out", filepath.Join(dir, "server"), "-module", "example.com/you/server", "-service", "Greeter", idl}, &stdout, &stderr); code != 0 {
		t.Fatalf("petrel gen: exit %d: %s", code, stderr.String())
	}
	bin := filepath.Join(dir, "greeter-server")
	build := exec.Command("go", "build", "-o", bin, "./server")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the skeleton: %v\n%s", err, out)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-addr", ln.Addr().String()).CombinedOutput()
	ln.Close()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !bytes.Contains(out, []byte("address already in use")) {
		t.Errorf("the skeleton on a taken port: %v, want exit status 1 saying the address is in use:\n%s", err, out)
	}
	if bytes.Contains(out, []byte("serving")) {
		t.Errorf("the skeleton on a taken port claimed to serve:\n%s", out)
	}

	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(pipe)
	lines.Scan()
	first := lines.Text()
	_, addr, _ := strings.Cut(first, "serving Greeter on ")
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "0" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the skeleton's first line is %q, want \"serving Greeter on ADDR\" with the port it listens on", first)
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Errorf("dialing the announced address: %v", err)
	} else {
		conn.Close()
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	last := first
	for lines.Scan() {
		last = lines.Text()
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM the skeleton exited with %v, want status 0", err)
	}
	if !strings.HasSuffix(last, "stopped") {
		t.Errorf("after SIGTERM the skeleton's last line is %q, want it to report that Stop finished", last)
	}
}
