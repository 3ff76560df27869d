package thriftbench_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// genModule is the import path of gen-petrel/.
const genModule = "github.com/petrel-rpc/petrel/bench/thrift/gen-petrel"

// TestGeneratedCodeIsCurrent regenerates gen-petrel/ with `petrel gen` from
// this checkout and fails on any difference: the committed code must be what
// the generator writes today. To update it, run from the repository root:
//
//	go run ./cmd/petrel gen -out bench/thrift/gen-petrel -module github.com/petrel-rpc/petrel/bench/thrift/gen-petrel bench/thrift/idl/payload.thrift
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/petrel")
	}
	out := t.TempDir()
	for _, idl := range []string{"idl/payload.thrift"} {
		cmd := exec.Command("go", "run", "github.com/petrel-rpc/petrel/cmd/petrel",
			"gen", "-out", out, "-module", genModule, idl)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("petrel gen %s: %v\n%s", idl, err, msg)
		}
	}
	want := readTree(t, out)
	got := readTree(t, "gen-petrel")
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("gen-petrel/%s is missing; petrel gen writes it", name)
		case !bytes.Equal(g, w):
			t.Errorf("gen-petrel/%s differs from what petrel gen writes now (lengths %d, %d); regenerate it", name, len(g), len(w))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("gen-petrel/%s is not written by petrel gen any more; remove it", name)
		}
	}
}

// readTree returns the contents of every file under dir by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
