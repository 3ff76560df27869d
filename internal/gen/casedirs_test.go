package gen_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/internal/gen"
)

// TestPackageDirsDifferingInCaseRefused checks that packages whose
// directories differ only in case (namespace go x.Y and x.y), or have a
// directory above them that does (x.Y.a and x.y.b), are refused with an
// error naming the files and namespaces; only whole file paths were
// compared, so Generate wrote them, and the go command refuses the result
// ("case-insensitive import collision").
func TestPackageDirsDifferingInCaseRefused(t *testing.T) {
	for _, ns := range [][2]string{{"x.Y", "x.y"}, {"x.Y.a", "x.y.b"}} {
		f := parseFiles(t, "two.thrift", map[string]string{
			"one.thrift": "namespace go " + ns[0] + "\nstruct A { 1: i32 x }\n",
			"two.thrift": "namespace go " + ns[1] + "\ninclude \"one.thrift\"\nstruct B { 1: one.A a }\n",
		})
		_, err := gen.Generate(f, gen.Options{Module: "m.example/out"})
		if err == nil {
			t.Errorf("namespaces go %s and %s: no error, want one saying the directories differ only in case", ns[0], ns[1])
			continue
		}
		for _, want := range []string{"differs only in case", "one.thrift (namespace go " + ns[0] + ")", "two.thrift (namespace go " + ns[1] + ")"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not say %q: %v", want, err)
			}
		}
	}
}
