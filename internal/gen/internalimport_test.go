package gen_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/internal/gen"
)

// TestInternalImportRefused checks that an include that would make a
// generated package import an internal package from outside the tree Go
// allows (b including a file of a.internal) is refused with an error naming
// both files and namespaces, while one from inside the tree (a or a.x including
// it) is accepted; Generate used to write b's import of a/internal, which
// Go refuses ("use of internal package not allowed").
func TestInternalImportRefused(t *testing.T) {
	for _, c := range []struct {
		ns string
		ok bool
	}{{"b", false}, {"b.a", false}, {"a", true}, {"a.x", true}} {
		f := parseFiles(t, "two.thrift", map[string]string{
			"one.thrift": "namespace go a.internal\nstruct A { 1: i32 x }\n",
			"two.thrift": "namespace go " + c.ns + "\ninclude \"one.thrift\"\nstruct B { 1: one.A a }\n",
		})
		_, err := gen.Generate(f, gen.Options{Module: "m.example/out"})
		if c.ok {
			if err != nil {
				t.Errorf("namespace go %s: %v", c.ns, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("namespace go %s: no error, want one saying m.example/out/%s may not import m.example/out/a/internal", c.ns, strings.ReplaceAll(c.ns, ".", "/"))
			continue
		}
		for _, want := range []string{"m.example/out/a/internal", "one.thrift (namespace go a.internal)", "two.thrift (namespace go " + c.ns + ")"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("namespace go %s: error does not say %q: %v", c.ns, want, err)
			}
		}
	}
}
