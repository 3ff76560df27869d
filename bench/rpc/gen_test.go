package rpc_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// genModule is the import path of gen-petrel/.
const genModule = "github.com/petrel-rpc/petrel/bench/rpc/gen-petrel"

// TestGeneratedCodeIsCurrent regenerates gen-petrel/ with `petrel gen` from
// this checkout and fails on any difference (see doc.go to update it).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/petrel")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "github.com/petrel-rpc/petrel/cmd/petrel",
		"gen", "-out", out, "-module", genModule, "echo.thrift")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("petrel gen: %v\n%s", err, msg)
	}
	sameTree(t, "gen-petrel", out, "petrel gen")
}

// TestProtoCodeIsCurrent regenerates pb/ with protoc when it and both Go
// plugins are installed, and fails on any difference (the files' headers
// name the generators' versions, so other versions differ too).
func TestProtoCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs protoc")
	}
	gobin := filepath.Join(goEnv(t, "GOPATH"), "bin")
	path := gobin + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, tool := range []string{"protoc", "protoc-gen-go", "protoc-gen-go-grpc"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat(filepath.Join(gobin, tool)); err != nil {
				t.Skipf("%s is not installed (see doc.go)", tool)
			}
		}
	}
	out := t.TempDir()
	cmd := exec.Command("protoc", "--go_out="+out, "--go_opt=paths=source_relative",
		"--go-grpc_out="+out, "--go-grpc_opt=paths=source_relative", "echo.proto")
	cmd.Env = append(os.Environ(), "PATH="+path)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, msg)
	}
	sameTree(t, "pb", out, "protoc")
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	b, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(b))
}

// sameTree fails unless dir holds exactly the files of want, byte for byte.
func sameTree(t *testing.T, dir, want, tool string) {
	t.Helper()
	w := readTree(t, want)
	got := readTree(t, dir)
	for name, wb := range w {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s/%s is missing; %s writes it", dir, name, tool)
		case !bytes.Equal(g, wb):
			t.Errorf("%s/%s differs from what %s writes now (lengths %d, %d); regenerate it (see doc.go)", dir, name, tool, len(g), len(wb))
		}
	}
	for name := range got {
		if _, ok := w[name]; !ok {
			t.Errorf("%s/%s is not written by %s any more; remove it", dir, name, tool)
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
