package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// genFiles returns the regular files under dir, slash-separated and
// relative to it.
func genFiles(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// includesArgs returns the arguments of a gen of
// idl/thrift/testdata/includes/main.thrift, which includes two files of its
// incdir, into out under the module example.com/out.
func includesArgs(out string) []string {
	td := filepath.Join("..", "..", "idl", "thrift", "testdata", "includes")
	return []string{"gen", "-out", out, "-module", "example.com/out", "-I", filepath.Join(td, "incdir"), filepath.Join(td, "main.thrift")}
}

// mustGen runs args, a gen into out, fails the test unless it exits 0, and
// returns the files under out as genFiles does.
func mustGen(t *testing.T, args []string, out string) []string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	return genFiles(t, out)
}

// idlAndFile makes a temporary directory holding a.thrift, an IDL of one
// struct, and a regular file named "file" that holds "mine", and returns
// their paths.
func idlAndFile(t *testing.T) (idl, file string) {
	t.Helper()
	dir := t.TempDir()
	idl = filepath.Join(dir, "a.thrift")
	if err := os.WriteFile(idl, []byte("struct A { 1: i32 x }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	return idl, file
}

// TestGenKeepsHandWrittenFile checks that a file the user wrote at the path
// of a generated file (no "Code generated ... DO NOT EDIT." line) is not
// overwritten: gen fails naming it and writes nothing, not even the other
// packages.
func TestGenKeepsHandWrittenFile(t *testing.T) {
	dir := t.TempDir()
	args := includesArgs(dir)
	files := mustGen(t, args, dir)
	if len(files) != 3 {
		t.Fatalf("generated %v, want 3 files", files)
	}
	first := filepath.Join(dir, filepath.FromSlash(files[0]))
	mine := filepath.Join(dir, filepath.FromSlash(files[2]))
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	own := []byte("// My own code, not generated.\npackage x\n\nfunc Keep() {}\n")
	if err := os.WriteFile(mine, own, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1 (a hand-written file is in the way); stderr:\n%s", code, stderr.String())
	}
	if got, _ := os.ReadFile(mine); !bytes.Equal(got, own) {
		t.Errorf("the hand-written %s was overwritten:\n%s", mine, got)
	}
	if !strings.Contains(stderr.String(), mine) || !strings.Contains(stderr.String(), "not generated") {
		t.Errorf("error does not name %s as a file that is not generated:\n%s", mine, stderr.String())
	}
	if _, err := os.Stat(first); err == nil {
		t.Errorf("%s was written although gen failed", first)
	}
}

// fsizeEnv, when set, makes the test binary a child that runs with its file
// size limit (RLIMIT_FSIZE) at that many bytes, which makes a write beyond it
// fail as a full disk would (Go ignores SIGXFSZ).
const fsizeEnv = "PETREL_TEST_FSIZE"

// runLimited runs `petrel gen args` (or, with args[0] == "writeNew",
// writeNew(args[1], args[2] bytes of content)) in a child process whose
// files may not grow beyond limit bytes, and returns its exit status and
// output.
func runLimited(t *testing.T, test string, limit int, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), fsizeEnv+"="+strconv.Itoa(limit), "PETREL_TEST_ARGS="+strings.Join(args, "\n"))
	outb, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(outb)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(outb)
}

// limitedChild does the work of runLimited in the child; it returns false
// in the parent.
func limitedChild() bool {
	limit := os.Getenv(fsizeEnv)
	if limit == "" {
		return false
	}
	n, _ := strconv.ParseUint(limit, 10, 64)
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	rl.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	args := strings.Split(os.Getenv("PETREL_TEST_ARGS"), "\n")
	if args[0] == "writeNew" {
		size, _ := strconv.Atoi(args[2])
		if err := writeNew(args[1], bytes.Repeat([]byte("/"), size)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
	return true
}

// TestGenDiskFullKeepsOldFiles checks that a regeneration that cannot
// write its files (the disk is full) leaves the files of the run before as
// they were, not truncated, and no stray files behind.
func TestGenDiskFullKeepsOldFiles(t *testing.T) {
	if limitedChild() {
		return
	}
	dir := t.TempDir()
	idl := filepath.Join(dir, "big.thrift")
	if err := os.WriteFile(idl, bigIDL(40, 4), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := []string{"gen", "-out", out, "-module", "example.com/big", idl}
	files := mustGen(t, args, out)
	if len(files) != 1 {
		t.Fatalf("generated %v, want one file", files)
	}
	gofile := filepath.Join(out, filepath.FromSlash(files[0]))
	before, err := os.ReadFile(gofile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idl, append(bigIDL(40, 4), "struct Added { 1: i32 x }\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, output := runLimited(t, "TestGenDiskFullKeepsOldFiles", len(before)/2, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the disk is full); output:\n%s", code, output)
	}
	if !strings.Contains(output, "file too large") {
		t.Errorf("error does not say the write failed:\n%s", output)
	}
	if after, _ := os.ReadFile(gofile); !bytes.Equal(after, before) {
		t.Errorf("%s was changed by the failed run: %d bytes, were %d", gofile, len(after), len(before))
	}
	if got := genFiles(t, out); len(got) != 1 {
		t.Errorf("the failed run left files behind: %v", got)
	}
}

// TestWriteNewDiskFull checks that a skeleton file that cannot be written
// whole is not left half written: the next run would leave it as it is.
func TestWriteNewDiskFull(t *testing.T) {
	if limitedChild() {
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "handler.go")
	code, output := runLimited(t, "TestWriteNewDiskFull", 1000, "writeNew", p, "5000")
	if code != 1 || !strings.Contains(output, "file too large") {
		t.Fatalf("exit %d, want 1 with a write error; output:\n%s", code, output)
	}
	if _, err := os.Stat(p); err == nil {
		t.Errorf("%s was left half written", p)
	}
	if got := genFiles(t, dir); len(got) != 0 {
		t.Errorf("the failed write left files behind: %v", got)
	}
}

// TestGenOutIsAFile checks that an -out naming a file is reported as such,
// naming the flag, and that the file is left alone.
func TestGenOutIsAFile(t *testing.T) {
	idl, file := idlAndFile(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-out", file, "-module", "m", idl}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
	if want := "-out " + file + " is a file, not a directory"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
	if got, _ := os.ReadFile(file); string(got) != "mine" {
		t.Errorf("%s was changed: %q", file, got)
	}
}

// TestGenOutUnderAFile checks that an -out below a file (-out file/gen) is
// reported naming the flag and the file in the way, before anything is
// parsed or written.
func TestGenOutUnderAFile(t *testing.T) {
	idl, file := idlAndFile(t)
	out := filepath.Join(file, "gen", "go")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-out", out, "-module", "m", idl}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
	if want := "petrel gen: -out " + out + ": " + file + " is a file, not a directory\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
	if got, _ := os.ReadFile(file); string(got) != "mine" {
		t.Errorf("%s was changed: %q", file, got)
	}
}

// TestGenModuleMismatch checks that a -module which is not the import path
// of -out in the Go module around it (the module's own path, as Kitex's
// -module takes) is refused before anything is written, naming the import
// path to pass; the right one, with or without a trailing slash, is taken.
func TestGenModuleMismatch(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("// mine\nmodule \"example.com/you\" // the module\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "gen")
	var stdout, stderr bytes.Buffer
	args := includesArgs(out)
	args[4] = "example.com/you"
	if code := run(args, &stdout, &stderr); code != 2 {
		t.Fatalf("-module the module's path: exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"-module example.com/you", "example.com/you/gen", filepath.Join(dir, "go.mod")} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("error does not say %q:\n%s", want, stderr.String())
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written although gen failed", out)
	}
	for _, m := range []string{"example.com/you/gen", "example.com/you/gen/"} {
		args[4] = m
		if got := mustGen(t, args, out); len(got) != 3 {
			t.Errorf("-module %s: generated %v, want three packages", m, got)
		}
	}

	// A module nested in the first one is the one that counts, also for an
	// -out that does not exist yet.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "go.mod"), []byte("module example.com/sub\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(sub, "a", "b")
	args = includesArgs(out)
	args[4] = "example.com/you/sub/a/b"
	stderr.Reset()
	if code := run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "example.com/sub/a/b") {
		t.Errorf("-module of the outer module: exit %d, want 2 naming example.com/sub/a/b; stderr:\n%s", code, stderr.String())
	}
	args[4] = "example.com/sub/a/b"
	mustGen(t, args, out)
}
