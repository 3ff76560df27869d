package gen_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

// corpusModule is the module path of the temporary module the corpus test
// builds.
const corpusModule = "petrel.test/corpus"

var (
	structRe  = regexp.MustCompile(`(?m)^func \(p \*(\w+)\) FastRead\(`)
	unionRe   = regexp.MustCompile(`(?m)^// (\w+) is a union: set at most one field\.$`)
	serviceRe = regexp.MustCompile(`(?m)^var (\w+ServiceInfo) = &thrift\.ServiceInfo\{`)
)

// repoRoot returns the root of the Petrel checkout (the directory holding
// the go.mod of github.com/petrel-rpc/petrel) above the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/petrel-rpc/petrel\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no github.com/petrel-rpc/petrel go.mod above the working directory")
		}
		dir = parent
	}
}

// TestCorpus generates every fixture into one temporary module, with two
// server skeletons (gen.Scaffold), builds and vets it, and runs there a generated round-trip test over every struct
// (binary, nocopy and compact) plus the behaviour tests of
// testdata/harness.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated code with the go command")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	gomod := fmt.Sprintf("module %s\n\ngo 1.26.0\n\nrequire github.com/petrel-rpc/petrel v0.0.0\n\nreplace github.com/petrel-rpc/petrel => %s\n", corpusModule, root)
	writeFile(t, filepath.Join(dir, "go.mod"), []byte(gomod))
	// The runtime module's checksums: the temp module needs the same
	// dependencies, and without their sums the go command would ask the
	// checksum database, which a machine without outside network lacks.
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), sums)

	type pkg struct {
		importPath string
		structs    []string
		unions     map[string]bool
		services   []string
	}
	pkgs := map[string]*pkg{}
	for _, fx := range fixtures(t) {
		fx.opt.Module = corpusModule + "/gen/" + fx.name
		for _, f := range generate(t, fx) {
			writeFile(t, filepath.Join(dir, "gen", fx.name, filepath.FromSlash(f.Path)), f.Content)
			ip := fx.opt.Module + "/" + path.Dir(f.Path)
			p := pkgs[ip]
			if p == nil {
				p = &pkg{importPath: ip, unions: map[string]bool{}}
				pkgs[ip] = p
			}
			for _, m := range structRe.FindAllSubmatch(f.Content, -1) {
				p.structs = append(p.structs, string(m[1]))
			}
			for _, m := range unionRe.FindAllSubmatch(f.Content, -1) {
				p.unions[string(m[1])] = true
			}
			for _, m := range serviceRe.FindAllSubmatch(f.Content, -1) {
				p.services = append(p.services, string(m[1]))
			}
		}
	}

	// The table of every generated struct and service.
	var ips []string
	for ip := range pkgs {
		ips = append(ips, ip)
	}
	sort.Strings(ips)
	var imports, cases, services strings.Builder
	nstructs := 0
	for i, ip := range ips {
		p := pkgs[ip]
		if len(p.structs) == 0 && len(p.services) == 0 {
			continue // nothing to test (enums and constants only); vet still builds it
		}
		alias := fmt.Sprintf("p%d", i)
		fmt.Fprintf(&imports, "\t%s %q\n", alias, ip)
		for _, s := range p.structs {
			fmt.Fprintf(&cases, "\t{name: %q, union: %v, new: func() codec { return new(%s.%s) }},\n", strings.TrimPrefix(ip, corpusModule+"/gen/")+"."+s, p.unions[s], alias, s)
			nstructs++
		}
		for _, s := range p.services {
			fmt.Fprintf(&services, "\t%s.%s,\n", alias, s)
		}
	}
	table := "package corpus_test\n\nimport (\n\t\"github.com/petrel-rpc/petrel/codec/thrift\"\n" + imports.String() + ")\n\n" +
		"var cases = []testCase{\n" + cases.String() + "}\n\n" +
		"var services = []*thrift.ServiceInfo{\n" + services.String() + "}\n"
	writeFile(t, filepath.Join(dir, "table_test.go"), []byte(table))
	harness, err := filepath.Glob(filepath.Join("testdata", "harness", "*_test.go.txt"))
	if err != nil || len(harness) == 0 {
		t.Fatalf("no harness files: %v", err)
	}
	for _, h := range harness {
		b, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, strings.TrimSuffix(filepath.Base(h), ".txt")), b)
	}
	// Server skeletons (petrel gen -service), each beside its generated
	// packages, built with the rest.
	for _, sc := range []struct{ fixture, service string }{{"behavior", "Echo"}, {"idl_keywords", "select"}, {"glue", "Svc2"}, {"idl_includes_main", "Relay"}} {
		var fx fixture
		for _, f := range fixtures(t) {
			if f.name == sc.fixture {
				fx = f
			}
		}
		fx.opt.Module = corpusModule + "/scaffold/" + sc.fixture
		files := generate(t, fx)
		f, err := thrift.ParseFile(fx.path, thrift.ParseOptions{IncludeDirs: fx.includeDirs})
		if err != nil {
			t.Fatal(err)
		}
		skel, err := gen.Scaffold(f, sc.service, fx.opt)
		if err != nil {
			t.Fatalf("Scaffold(%s, %s): %v", fx.path, sc.service, err)
		}
		for _, f := range append(files, skel...) {
			writeFile(t, filepath.Join(dir, "scaffold", sc.fixture, filepath.FromSlash(f.Path)), f.Content)
		}
	}
	// A package at the module root so that ./... has the test in it.
	writeFile(t, filepath.Join(dir, "doc.go"), []byte("// Package corpus holds the corpus test of the generator.\npackage corpus\n"))
	t.Logf("%d packages, %d structs", len(pkgs), nstructs)

	goCmd(t, dir, "vet", "./...")
	goCmd(t, dir, "build", "./...")
	goCmd(t, dir, "test", "-count=1", "./...")
}

func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("go %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
