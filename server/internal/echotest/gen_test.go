package echotest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates echo.go and fails on any difference,
// so the committed code follows the generator.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "../../../cmd/petrel", "gen", "-out", out, "-module", "github.com/petrel-rpc/petrel/server/internal", "echo.thrift")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("petrel gen: %v\n%s", err, b)
	}
	want, err := os.ReadFile(filepath.Join(out, "echotest", "echo.go"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("echo.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("echo.go differs from what petrel gen writes now: run go generate in server/internal/echotest")
	}
}
