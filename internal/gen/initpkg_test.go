package gen_test

import (
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/petrel-rpc/petrel/internal/gen"
)

// TestPackageNamedInitRenamed checks that a package that would be named
// init (namespace go x.init, or init.thrift without one) is named init_,
// and imported under that name, as keywords, _ and main are; it was named
// init, which Go lets no file import ("cannot import package as init").
func TestPackageNamedInitRenamed(t *testing.T) {
	for _, c := range []struct{ inc, src, path string }{
		{"one", "namespace go x.init\n", "m.example/out/x/init"},
		{"init", "", "m.example/out/init"},
	} {
		f := parseFiles(t, "two.thrift", map[string]string{
			c.inc + ".thrift": c.src + "struct A { 1: i32 x }\n",
			"two.thrift":      "include \"" + c.inc + ".thrift\"\nstruct B { 1: " + c.inc + ".A a }\n",
		})
		files, err := gen.Generate(f, gen.Options{Module: "m.example/out"})
		if err != nil {
			t.Fatal(err)
		}
		for _, gf := range files {
			af, err := parser.ParseFile(token.NewFileSet(), gf.Path, gf.Content, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			if af.Name.Name == "init" {
				t.Errorf("%s is package init", gf.Path)
			}
			for _, is := range af.Imports {
				if p, _ := strconv.Unquote(is.Path.Value); p == c.path && (is.Name == nil || is.Name.Name == "init") {
					t.Errorf("%s imports %s as init", gf.Path, p)
				}
			}
		}
	}
}
