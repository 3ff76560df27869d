package gen_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// idlTestdata holds the parser's fixtures, which the generator reuses.
const idlTestdata = "../../idl/thrift/testdata"

// goldenModule is the import path the golden outputs are generated for.
const goldenModule = "example.com/gen"

type fixture struct {
	name        string // golden file name, without extension
	path        string
	includeDirs []string
	opt         gen.Options
}

// fixtures returns every good .thrift file of the parser's testdata (all
// but broken/) and the generator's own, each generated once plainly; the
// behaviour fixture is also generated with KeepUnknown; glue holds the
// service glue's corner cases, corners other output that once did not
// compile.
func fixtures(t *testing.T) []fixture {
	t.Helper()
	var out []fixture
	incdir := filepath.Join(idlTestdata, "includes", "incdir")
	err := filepath.WalkDir(idlTestdata, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "broken" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".thrift") {
			return nil
		}
		rel, _ := filepath.Rel(idlTestdata, p)
		name := strings.TrimSuffix(filepath.ToSlash(rel), ".thrift")
		out = append(out, fixture{
			name:        "idl_" + strings.ReplaceAll(name, "/", "_"),
			path:        p,
			includeDirs: []string{incdir},
			opt:         gen.Options{Module: goldenModule},
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d fixtures under %s", len(out), idlTestdata)
	}
	out = append(out,
		fixture{name: "behavior", path: "testdata/behavior.thrift", opt: gen.Options{Module: goldenModule}},
		fixture{name: "behavior_keep_unknown", path: "testdata/behavior.thrift", opt: gen.Options{Module: goldenModule, KeepUnknown: true}},
		fixture{name: "glue", path: "testdata/glue.thrift", opt: gen.Options{Module: goldenModule}},
		fixture{name: "corners", path: "testdata/corners/main.thrift", opt: gen.Options{Module: goldenModule}},
	)
	return out
}

func generate(t *testing.T, fx fixture) []gen.File {
	t.Helper()
	f, err := thrift.ParseFile(fx.path, thrift.ParseOptions{IncludeDirs: fx.includeDirs})
	if err != nil {
		t.Fatalf("ParseFile(%s): %v", fx.path, err)
	}
	files, err := gen.Generate(f, fx.opt)
	if err != nil {
		t.Fatalf("Generate(%s): %v", fx.path, err)
	}
	return files
}

// joinFiles puts generated files into one text, each after a "-- path --"
// line.
func joinFiles(files []gen.File) []byte {
	var b bytes.Buffer
	for _, f := range files {
		b.WriteString("-- " + f.Path + " --\n")
		b.Write(f.Content)
	}
	return b.Bytes()
}

// TestGolden compares the output for every fixture with
// testdata/golden/<fixture>.golden; go test -update rewrites them.
func TestGolden(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			got := joinFiles(generate(t, fx))
			golden := filepath.Join("testdata", "golden", fx.name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run go test -update and review the diff):\n%s", golden, firstDiff(string(want), string(got)))
			}
		})
	}
}

// TestDeterministic checks that generating twice gives the same bytes.
func TestDeterministic(t *testing.T) {
	for _, fx := range fixtures(t) {
		a, b := joinFiles(generate(t, fx)), joinFiles(generate(t, fx))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs differ:\n%s", fx.name, firstDiff(string(a), string(b)))
		}
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + wl + "\n  got: " + gl
		}
	}
	return ""
}

func parseString(t *testing.T, src string) *thrift.File {
	t.Helper()
	f, err := thrift.Parse("test.thrift", []byte(src), thrift.ParseOptions{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

// parseFiles parses file main of the Thrift files srcs (by path).
func parseFiles(t *testing.T, main string, srcs map[string]string) *thrift.File {
	t.Helper()
	read := func(p string) ([]byte, error) {
		if s, ok := srcs[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	f, err := thrift.ParseFile(main, thrift.ParseOptions{ReadFile: read})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

func TestGenerateNeedsModule(t *testing.T) {
	f := parseString(t, "struct A { 1: i32 x }")
	_, err := gen.Generate(f, gen.Options{})
	var ge *gen.Error
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "Module") {
		t.Fatalf("Generate without Module: err = %v, want a *gen.Error about Module", err)
	}
}

// TestGenerateChecksModule checks that a Module that is not a Go import
// path is refused with an error naming it, instead of becoming import
// declarations that do not compile.
func TestGenerateChecksModule(t *testing.T) {
	f := parseString(t, "struct A { 1: i32 x }")
	for _, m := range []string{"example.com/gen", "m", "m/", "gopkg.in/yaml.v3", "a-b/c_d/e~f/g+h"} {
		if _, err := gen.Generate(f, gen.Options{Module: m}); err != nil {
			t.Errorf("Module %q: %v", m, err)
		}
	}
	for _, m := range []string{"example.com/my module", `x"y`, `a\\b`, "a//b", "/abs", "./x", "a/../b", "a/.", "a./b", "caf\u00e9"} {
		_, err := gen.Generate(f, gen.Options{Module: m})
		var ge *gen.Error
		if !errors.As(err, &ge) || !strings.Contains(err.Error(), "not a valid Go import path") || !strings.Contains(err.Error(), strconv.Quote(m)) {
			t.Errorf("Module %q: err = %v, want a *gen.Error saying it is not a valid Go import path", m, err)
		}
		if _, err := gen.Scaffold(parseString(t, "service S {}"), "S", gen.Options{Module: m}); err == nil {
			t.Errorf("Scaffold with Module %q: no error", m)
		}
	}
}

// TestSameGoFileNamesThriftFiles checks that two Thrift files placed in
// the same Go file are named in the error, with the way out.
func TestSameGoFileNamesThriftFiles(t *testing.T) {
	srcs := map[string]string{
		filepath.Join("d1", "a.thrift"): "struct A { 1: i32 x }\n",
		filepath.Join("d2", "a.thrift"): "include \"../d1/a.thrift\"\nstruct B { 1: a.A a }\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := srcs[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	f, err := thrift.ParseFile(filepath.Join("d2", "a.thrift"), thrift.ParseOptions{ReadFile: read})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gen.Generate(f, gen.Options{Module: "m.example/out"})
	if err == nil {
		t.Fatal("Generate: no error for two files placed in a/a.go")
	}
	for _, want := range []string{"a/a.go", filepath.Join("d1", "a.thrift"), filepath.Join("d2", "a.thrift"), "namespace go"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
}

func TestPlacement(t *testing.T) {
	cases := []struct {
		src, wantPath, wantPkg string
	}{
		{"namespace go example.hello\nstruct A { 1: i32 x }", "example/hello/test.go", "package hello"},
		{"struct A { 1: i32 x }", "test/test.go", "package test"},
		{"namespace go a.type\nstruct A { 1: i32 x }", "a/type/test.go", "package type_"},
		{"namespace * star.pkg\nstruct A { 1: i32 x }", "star/pkg/test.go", "package pkg"},
	}
	for _, c := range cases {
		files, err := gen.Generate(parseString(t, c.src), gen.Options{Module: "m.example/out"})
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if len(files) != 1 || files[0].Path != c.wantPath {
			t.Fatalf("%q: files %v, want one at %s", c.src, paths(files), c.wantPath)
		}
		src := string(files[0].Content)
		if !strings.HasPrefix(src, "// Code generated by petrel. DO NOT EDIT.\n") {
			t.Errorf("%q: missing the generated-code header", c.src)
		}
		if !strings.Contains(src, "\n"+c.wantPkg+"\n") {
			t.Errorf("%q: want %q in:\n%s", c.src, c.wantPkg, src[:200])
		}
	}
}

func paths(files []gen.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// TestFixedSizeConstant checks the precomputation: a struct of fixed-size
// fields has a BLength that is one constant, and lists of fixed-size
// elements are sized without a loop and written in bulk.
func TestFixedSizeConstant(t *testing.T) {
	files := generate(t, fixture{path: "testdata/behavior.thrift", opt: gen.Options{Module: goldenModule}})
	src := string(files[0].Content)
	fixed := funcBody(t, src, "func (p *Fixed) BLength() int {")
	// 7 headers (21) + 1+1+2+4+8+8+16 (40) + stop (1) = 62.
	if !strings.Contains(fixed, "l := 62\n") || strings.Count(fixed, "l +=") != 0 {
		t.Errorf("Fixed.BLength is not one constant:\n%s", fixed)
	}
	bulk := funcBody(t, src, "func (p *Bulk) BLength() int {")
	if strings.Contains(bulk, "for ") {
		t.Errorf("Bulk.BLength loops over fixed-size elements:\n%s", bulk)
	}
	for _, want := range []string{"len(p.I64s) * 8", "len(p.I32s) * 4", "len(p.Doubles) * 8", "len(p.I16s) * 2", "len(p.Scores) * 12"} {
		if !strings.Contains(bulk, want) {
			t.Errorf("Bulk.BLength lacks %q:\n%s", want, bulk)
		}
	}
	w := funcBody(t, src, "func (p *Bulk) FastWrite(b []byte) int {")
	for _, want := range []string{"WriteI64Slice(b[off:], p.I64s)", "WriteI32Slice(b[off:], p.I32s)", "WriteDoubleSlice(b[off:], p.Doubles)"} {
		if !strings.Contains(w, want) {
			t.Errorf("Bulk.FastWrite lacks %q", want)
		}
	}
	r := funcBody(t, src, "func (p *Bulk) FastReadDepth(b []byte, depth int) (int, error) {")
	for _, want := range []string{"ReadI64Slice(", "ReadI32Slice(", "ReadDoubleSlice("} {
		if !strings.Contains(r, want) {
			t.Errorf("Bulk.FastReadDepth lacks %q", want)
		}
	}
}

// funcBody returns the text of the function starting with header.
func funcBody(t *testing.T, src, header string) string {
	t.Helper()
	i := strings.Index(src, header)
	if i < 0 {
		t.Fatalf("no %q in the output", header)
	}
	j := strings.Index(src[i:], "\n}\n")
	return src[i : i+j+3]
}

func TestMapKeyPointers(t *testing.T) {
	f := parseString(t, `namespace go k
struct P { 1: i32 x }
struct S {
  1: map<list<string>, i32> byList
  2: map<P, string> byStruct
  3: map<binary, i32> byBinary
}`)
	files, err := gen.Generate(f, gen.Options{Module: "m"})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[0].Content)
	for _, want := range []string{"map[*[]string]int32", "map[*P]string", "map[string]int32"} {
		if !strings.Contains(src, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestGofmtFixedPoint checks that the output is exactly what gofmt
// prints (most of it is laid out by the generator, not by go/format).
func TestGofmtFixedPoint(t *testing.T) {
	for _, fx := range fixtures(t) {
		for _, f := range generate(t, fx) {
			want, err := format.Source(f.Content)
			if err != nil {
				t.Fatalf("%s %s: %v", fx.name, f.Path, err)
			}
			if !bytes.Equal(want, f.Content) {
				t.Errorf("%s %s is not gofmt-formatted:\n%s", fx.name, f.Path, firstDiff(string(want), string(f.Content)))
			}
		}
	}
}

// TestFieldsNeverNameMethods takes every method the generator emits on
// struct types (over all fixtures; accessors aside) and checks that a field
// of that name is either rejected by the checks or given another Go name:
// a field and a method of one name do not compile.
func TestFieldsNeverNameMethods(t *testing.T) {
	methods := map[string]bool{}
	for _, fx := range fixtures(t) {
		for _, f := range generate(t, fx) {
			for m := range structMethods(t, f.Content) {
				if !strings.HasPrefix(m, "Get") && !strings.HasPrefix(m, "IsSet") {
					methods[m] = true
				}
			}
		}
	}
	if !methods["FastRead"] || !methods["InitDefault"] {
		t.Fatalf("methods found: %v", methods)
	}
	for m := range methods {
		f, err := thrift.Parse("test.thrift", []byte("namespace go m\nstruct S { 1: i32 "+m+" }\n"), thrift.ParseOptions{})
		if err != nil {
			if !strings.Contains(err.Error(), "test.thrift:2:") || !strings.Contains(err.Error(), "method") {
				t.Errorf("field %s: rejected without a position or reason: %v", m, err)
			}
			continue
		}
		files, err := gen.Generate(f, gen.Options{Module: "m.example/x"})
		if err != nil {
			t.Errorf("field %s: %v", m, err)
			continue
		}
		for _, fl := range structFields(t, files[0].Content, "S") {
			if fl == m {
				t.Errorf("field %s keeps the name of a method of generated structs", m)
			}
		}
	}
}

// structMethods returns the names of the methods declared on the Thrift
// struct types (those with a FastRead method) in the Go source src.
func structMethods(t *testing.T, src []byte) map[string]bool {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	structs := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok {
			if _, ok := ts.Type.(*ast.StructType); ok {
				structs[ts.Name.Name] = true
			}
		}
		return true
	})
	byType := map[string]map[string]bool{}
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
			continue
		}
		rt := fd.Recv.List[0].Type
		if st, ok := rt.(*ast.StarExpr); ok {
			rt = st.X
		}
		if id, ok := rt.(*ast.Ident); ok && structs[id.Name] {
			if byType[id.Name] == nil {
				byType[id.Name] = map[string]bool{}
			}
			byType[id.Name][fd.Name.Name] = true
		}
	}
	out := map[string]bool{}
	for _, ms := range byType {
		if ms["FastRead"] {
			for m := range ms {
				out[m] = true
			}
		}
	}
	return out
}

// structFields returns the field names of struct type name in src.
func structFields(t *testing.T, src []byte, name string) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == name {
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fl := range st.Fields.List {
					for _, id := range fl.Names {
						out = append(out, id.Name)
					}
				}
			}
		}
		return true
	})
	if len(out) == 0 {
		t.Fatalf("no struct %s with fields in the output", name)
	}
	return out
}

// TestDocCommentCleaned: IDL comments may hold what Go comments may not (a
// NUL byte, invalid UTF-8, a byte order mark, other control characters);
// the generator writes U+FFFD for those instead of failing on its own
// output.
func TestDocCommentCleaned(t *testing.T) {
	for _, doc := range []string{"nul \x00 byte", "bad \xff utf8", "bom \ufeff mark", "bell \a and del \x7f", "cr \r mid line"} {
		src := "/** file " + doc + " */\n\nstruct S { 1: i32 a }\n/** " + doc + " */\nstruct T {\n  /** " + doc + " */\n  1: i32 a\n}\n" +
			"/** " + doc + " */\nenum E {\n  /** " + doc + " */\n  A = 1\n}\n/** " + doc + " */\nservice Svc {\n  /** " + doc + " */\n  void f()\n}\n"
		f, err := thrift.Parse("doc.thrift", []byte(src), thrift.ParseOptions{})
		if err != nil {
			t.Fatalf("doc %q: Parse: %v", doc, err)
		}
		files, err := gen.Generate(f, gen.Options{Module: "m.example/doc"})
		if err != nil {
			t.Errorf("doc %q: Generate: %v", doc, err)
			continue
		}
		out := string(files[0].Content)
		if strings.Contains(doc, "\r") {
			if !strings.Contains(out, "// cr\n") || strings.Contains(out, "\r") {
				t.Errorf("doc %q: a carriage return does not end the line", doc)
			}
		} else if n := strings.Count(out, "\ufffd"); n < 6 {
			t.Errorf("doc %q: U+FFFD written %d times, want once per comment (6)", doc, n)
		}
	}
}

// TestNestedContainersBounded: each typedef is a map of the previous one,
// whose codec is written out in full at each use, so the code doubles per
// level. Thirty levels (about 2^30 times the first) end in an error at the
// typedef or struct whose code passes the bound, quickly and in bounded
// memory, instead of exhausting memory.
func TestNestedContainersBounded(t *testing.T) {
	f := parseMapChain(t, 30, "")
	start := time.Now()
	_, err := gen.Generate(f, gen.Options{Module: "m.example/deep"})
	if err == nil || !strings.Contains(err.Error(), "deep.thrift:") || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("Generate: %v, want an error at a declaration of deep.thrift saying the code is too large", err)
	}
	t.Logf("after %v: %v", time.Since(start), err)
}

// parseMapChain parses deep.thrift: typedefs A0 = map<i32, i32> and each
// An = map<An-1, An-1> up to depth, a struct Deep with a field of the last,
// then extra.
func parseMapChain(t *testing.T, depth int, extra string) *thrift.File {
	t.Helper()
	var src strings.Builder
	src.WriteString("typedef map<i32, i32> A0\n")
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&src, "typedef map<A%d, A%d> A%d\n", i-1, i-1, i)
	}
	fmt.Fprintf(&src, "struct Deep {\n  1: A%d a\n}\n%s", depth, extra)
	f, err := thrift.Parse("deep.thrift", []byte(src.String()), thrift.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTypeWalksLinear checks that the walks over the types a struct can hold
// (does it hold a union, a string) visit each type once: over a chain of
// typedef map<A, A>, walking key and value of each level apart took 2^depth
// steps, 17 s at a depth of 30 and for ever at 60, for an IDL of 62 lines.
func TestTypeWalksLinear(t *testing.T) {
	f := parseMapChain(t, 60, "service S {\n  Deep get(1: Deep d)\n}\n")
	done := make(chan error, 1)
	go func() {
		_, err := gen.Generate(f, gen.Options{Module: "m.example/deep"})
		done <- err
	}()
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "MiB") {
			t.Fatalf("Generate: %v, want an error saying the code is too large", err)
		}
	case <-timer.C:
		t.Fatal("Generate still running after a minute on a chain of 60 typedef map<A, A>")
	}
}

// TestConstReferencesBounded checks the bound on generated code when it is
// reached through constants that refer to constants (each reference is
// written out in full, so [C, C] doubles per level): the error must name
// that cause, not only nested container types.
func TestConstReferencesBounded(t *testing.T) {
	var src strings.Builder
	src.WriteString("typedef list<i32> L0\nconst L0 C0 = [1, 2]\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&src, "typedef list<L%d> L%d\nconst L%d C%d = [C%d, C%d]\n", i-1, i, i, i, i-1, i-1)
	}
	f, err := thrift.Parse("consts.thrift", []byte(src.String()), thrift.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gen.Generate(f, gen.Options{Module: "m.example/consts"})
	if err == nil || !strings.Contains(err.Error(), "consts.thrift:") || !strings.Contains(err.Error(), "constants it refers to") {
		t.Fatalf("Generate: %v, want an error at a constant saying the constants it refers to are written out in full", err)
	}
}

// TestConstValueAllocationBounded checks that the bound on generated code
// also bounds what is built before it is written: a constant listing a
// 10 MB constant 100 times was built whole (1 GB of text) before the bound
// was checked.
func TestConstValueAllocationBounded(t *testing.T) {
	refs := func(name string, n int) string {
		return strings.TrimSuffix(strings.Repeat(name+", ", n), ", ")
	}
	src := "typedef list<i32> L0\nconst L0 C0 = [1, 2]\n" +
		"typedef list<L0> L1\nconst L1 C1 = [" + refs("C0", 1000) + "]\n" +
		"typedef list<L1> L2\nconst L2 C2 = [" + refs("C1", 1000) + "]\n" + // about 10 MB of Go
		"typedef list<L2> L3\nconst L3 BIG = [" + refs("C2", 100) + "]\n"
	f, err := thrift.Parse("big.thrift", []byte(src), thrift.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = gen.Generate(f, gen.Options{Module: "m.example/big"})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "BIG") || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("Generate: %v, want an error at BIG saying the code is too large", err)
	}
	// Building up to the bound (64 MiB) costs about 1.2 GB, most of it the
	// growth of the builders; before the fix it was 24 GB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<30 {
		t.Errorf("Generate allocated %d MiB before failing, want under 4 GiB", got>>20)
	}
}

// TestScaffoldImportAliases checks that the skeleton imports a generated
// package under the name its code uses when that is not the package's last
// path element (v1 is imported as v1pkg), also for a module path without a
// dot, whose packages were taken for the standard library's and imported
// without their alias.
func TestScaffoldImportAliases(t *testing.T) {
	f := parseString(t, "namespace go api.v1\nservice Greeter { string greet(1: string name) }\n")
	for _, module := range []string{"myapp", "example.com/myapp"} {
		files, err := gen.Scaffold(f, "Greeter", gen.Options{Module: module})
		if err != nil {
			t.Fatal(err)
		}
		for _, gf := range files {
			af, err := parser.ParseFile(token.NewFileSet(), gf.Path, gf.Content, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, imp := range af.Imports {
				if imp.Path.Value != strconv.Quote(module+"/api/v1") {
					continue
				}
				found = true
				name := "v1"
				if imp.Name != nil {
					name = imp.Name.Name
				}
				if !bytes.Contains(gf.Content, []byte(name+".NewGreeterServer")) && !bytes.Contains(gf.Content, []byte(name+".Greeter ")) {
					t.Errorf("module %s: %s imports %s as %s, which its code does not use:\n%s", module, gf.Path, imp.Path.Value, name, gf.Content)
				}
			}
			if !found {
				t.Errorf("module %s: %s does not import the generated package:\n%s", module, gf.Path, gf.Content)
			}
		}
	}
}

// TestGoFileNamesBuilt: Go file names are ones the go command builds: not
// starting with "_" (which it ignores; a Thrift file named _common or
// 3rdparty gave one), not ending in a GOOS or GOARCH it knows (riscv, ppc,
// s390...: the file built only there), and not two in a directory that
// differ only in case (which it refuses).
func TestGoFileNamesBuilt(t *testing.T) {
	srcs := map[string]string{
		"main.thrift":        "include \"_common.thrift\"\ninclude \"3rdparty.thrift\"\ninclude \"board_riscv.thrift\"\nstruct M { 1: _common.C c, 3: board_riscv.B b }\n",
		"_common.thrift":     "namespace go x\nstruct C { 1: i32 x }\n",
		"3rdparty.thrift":    "namespace go x\nstruct P { 1: i32 x }\n",
		"board_riscv.thrift": "namespace go x\nstruct B { 1: i32 x }\n",
		"Common.thrift":      "namespace go x\nstruct D { 1: i32 x }\n",
		"common.thrift":      "namespace go x\nstruct E { 1: i32 x }\n",
		"case.thrift":        "include \"Common.thrift\"\ninclude \"common.thrift\"\nstruct F { 1: Common.D d, 2: common.E e }\n",
	}
	out, err := gen.Generate(parseFiles(t, "main.thrift", srcs), gen.Options{Module: "m.example/out"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, gf := range out {
		got[gf.Path] = true
	}
	for _, want := range []string{"x/x_common.go", "x/x_3rdparty.go", "x/board_riscv_gen.go"} {
		if !got[want] {
			t.Errorf("no %s among %v", want, got)
		}
	}
	if _, err := gen.Generate(parseFiles(t, "case.thrift", srcs), gen.Options{Module: "m.example/out"}); err == nil || !strings.Contains(err.Error(), "differs only in case") {
		t.Errorf("Generate of x/Common.go and x/common.go: %v, want an error", err)
	}
}
