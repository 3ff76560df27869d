package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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

// TestGenKeepsHandWrittenFile checks that a file the user wrote at the path
// of a generated file (no "Code generated ... DO NOT EDIT." line) is not
// overwritten: gen fails naming it and writes nothing, not even the other
// packages.
func TestGenKeepsHandWrittenFile(t *testing.T) {
	dir := t.TempDir()
	td := filepath.Join("..", "..", "idl", "thrift", "testdata", "includes")
	args := []string{"gen", "-out", dir, "-module", "example.com/out", "-I", filepath.Join(td, "incdir"), filepath.Join(td, "main.thrift")}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	files := genFiles(t, dir)
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
	stderr.Reset()
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
