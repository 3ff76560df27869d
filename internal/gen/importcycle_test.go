package gen_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/internal/gen"
)

// TestImportCycleRefused checks that Thrift files whose includes have no
// cycle but whose Go packages would (a.thrift in p includes b.thrift in q,
// which includes c.thrift in p again) are refused with an error naming the
// files and namespaces; Generate used to write packages p and q importing
// each other, which Go refuses ("import cycle not allowed").
func TestImportCycleRefused(t *testing.T) {
	f := parseFiles(t, "a.thrift", map[string]string{
		"c.thrift": "namespace go p\nstruct C { 1: i32 x }\n",
		"b.thrift": "namespace go q\ninclude \"c.thrift\"\nstruct B { 1: c.C c }\n",
		"a.thrift": "namespace go p\ninclude \"b.thrift\"\nstruct A { 1: b.B b }\n",
	})
	_, err := gen.Generate(f, gen.Options{Module: "m.example/out"})
	if err == nil {
		t.Fatal("Generate: no error, want one saying packages p and q would import each other")
	}
	for _, want := range []string{"cycle", "a.thrift (namespace go p)", "b.thrift (namespace go q)", "c.thrift (namespace go p)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
}
