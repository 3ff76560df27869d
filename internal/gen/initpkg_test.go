package gen_test

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
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

// TestVendorSegmentRenamed: a namespace go element "vendor" becomes the
// directory (and, last, the package) vendor_, and a -module with a vendor
// element is refused: the go command takes the packages below a vendor
// directory for vendored copies, which no package outside may import
// ("use of vendored package not allowed"), and a vendor directory at the
// module's root turns on vendoring for the whole module.
func TestVendorSegmentRenamed(t *testing.T) {
	for _, ns := range []string{"x.vendor.y", "vendor.y", "x.vendor"} {
		f := parseFiles(t, "a.thrift", map[string]string{
			"b.thrift": "namespace go " + ns + "\nstruct B { 1: i32 x }\n",
			"a.thrift": "namespace go top\ninclude \"b.thrift\"\nstruct A { 1: b.B b }\n",
		})
		out, err := gen.Generate(f, gen.Options{Module: "m.example/out"})
		if err != nil {
			t.Fatalf("namespace go %s: %v", ns, err)
		}
		for _, o := range out {
			for _, elem := range strings.Split(o.Path, "/") {
				if elem == "vendor" {
					t.Errorf("namespace go %s: Generate wrote %s, below a vendor directory", ns, o.Path)
				}
			}
			if strings.Contains(string(o.Content), "/vendor/") || strings.Contains(string(o.Content), "package vendor\n") {
				t.Errorf("namespace go %s: %s names a vendor package:\n%s", ns, o.Path, o.Content)
			}
		}
	}
	f := parseFiles(t, "a.thrift", map[string]string{"a.thrift": "struct A { 1: i32 x }\n"})
	if _, err := gen.Generate(f, gen.Options{Module: "example.com/vendor/x"}); err == nil || !strings.Contains(err.Error(), "vendor") {
		t.Errorf("Module example.com/vendor/x: got %v, want an error about its vendor element", err)
	}
}
