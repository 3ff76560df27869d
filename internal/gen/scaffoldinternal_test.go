package gen_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/internal/gen"
)

// TestScaffoldInternalPackage checks that a skeleton whose service lives in
// a package below an internal directory that the skeleton (package main in
// the -out directory itself) may not import, by Go's rule on internal
// packages, is refused with an error that names the package and says why,
// instead of a main.go that does not compile; an internal directory right
// under the -out directory is importable and is accepted.
func TestScaffoldInternalPackage(t *testing.T) {
	const svc = "struct A { 1: string a }\nservice S { A f() }\n"
	f := parseString(t, "namespace go corp.internal.api\n"+svc)
	_, err := gen.Scaffold(f, "S", gen.Options{Module: "example.com/you/server"})
	if err == nil {
		t.Fatal("Scaffold of a service in example.com/you/server/corp/internal/api: no error, want one saying main.go could not import it")
	}
	for _, want := range []string{"example.com/you/server/corp/internal/api", "internal"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	for _, ns := range []string{"internal.api", "corp.internals.api", "corp.api.internal"} {
		f := parseString(t, "namespace go "+ns+"\n"+svc)
		if _, err := gen.Scaffold(f, "S", gen.Options{Module: "example.com/you/server"}); err != nil && ns != "corp.api.internal" {
			t.Errorf("namespace go %s: %v", ns, err)
		} else if err == nil && ns == "corp.api.internal" {
			t.Errorf("namespace go %s: no error, want one (example.com/you/server may not import .../corp/api/internal)", ns)
		}
	}
}
