package gen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

// TestScaffoldImportsUsed checks that the skeleton's files import only the
// packages their code uses (Go refuses an unused import): a service that
// extends one of another package, whose methods use none of that package's
// types, and a method whose only type from a package is an exception it
// throws (the skeleton's handler does not name exceptions).
func TestScaffoldImportsUsed(t *testing.T) {
	f, err := thrift.ParseFile(filepath.Join(idlTestdata, "includes", "main.thrift"), thrift.ParseOptions{IncludeDirs: []string{filepath.Join(idlTestdata, "includes", "incdir")}})
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Scaffold(f, "Relay", gen.Options{Module: "example.com/relay"})
	if err != nil {
		t.Fatal(err)
	}
	for _, gf := range files {
		af, err := parser.ParseFile(token.NewFileSet(), gf.Path, gf.Content, 0)
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		ast.Inspect(af, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					used[id.Name] = true
				}
			}
			return true
		})
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			name := path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if !used[name] {
				t.Errorf("%s imports %s (as %s), which its code does not use: Go refuses to compile it\n%s", gf.Path, p, name, gf.Content)
			}
		}
	}
}
