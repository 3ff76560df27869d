package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenLongFileName: a Thrift file whose Go file name is legal (here 243
// bytes, under NAME_MAX 255) was refused with "file name too long", because
// writeGenerated first wrote to "."+name+".<random>.tmp", 16 bytes longer
// than the file it makes. Before temporary files (8eeed97) such a file was
// generated, as it is again (the temporary name is short).
func TestGenLongFileName(t *testing.T) {
	dir := t.TempDir()
	base := strings.Repeat("a", 240) // a.thrift name of 247 bytes, Go file of 243
	idl := filepath.Join(dir, base+".thrift")
	if err := os.WriteFile(idl, []byte("namespace go x\nstruct A { 1: i32 a }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-out", out, "-module", "example.com/out", idl}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d for a Go file name of %d bytes; stderr:\n%s", code, len(base)+3, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "x", base+".go")); err != nil {
		t.Fatal(err)
	}
}
