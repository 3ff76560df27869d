package gen_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

// TestNoWindowsReservedPathElements checks that no generated directory or
// file is named like a Windows device (con, aux, nul, prn, com1..9,
// lpt1..9, in any case, before any dot): the go command refuses such import
// paths on every platform ("aux" disallowed as path element component on
// Windows), and such file names in module zips, so the code generated for
// aux.thrift, or for namespace go a.com1.b, could not be built.
func TestNoWindowsReservedPathElements(t *testing.T) {
	reserved := map[string]bool{"con": true, "prn": true, "aux": true, "nul": true}
	for i := 1; i <= 9; i++ {
		reserved["com"+string(rune('0'+i))] = true
		reserved["lpt"+string(rune('0'+i))] = true
	}
	for _, c := range []struct{ name, src string }{
		{"aux.thrift", "struct S { 1: i32 x }\n"},
		{"NUL.thrift", "struct S { 1: i32 x }\n"},
		{"x.thrift", "namespace go a.Com1.lpt9\nstruct S { 1: i32 x }\n"},
		{"con.thrift", "namespace go prn\nstruct S { 1: i32 x }\n"},
	} {
		f, err := thrift.Parse(c.name, []byte(c.src), thrift.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		files, err := gen.Generate(f, gen.Options{Module: "m.example/x"})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for _, gf := range files {
			for _, elem := range strings.Split(gf.Path, "/") {
				short, _, _ := strings.Cut(elem, ".")
				if reserved[strings.ToLower(short)] {
					t.Errorf("%s: generated file %s has the path element %q, a Windows device name", c.name, gf.Path, elem)
				}
			}
		}
	}
	_, err := gen.Generate(&thrift.File{Name: "m", Path: "m.thrift"}, gen.Options{Module: "m.example/Aux/x"})
	if err == nil || !strings.Contains(err.Error(), "not a valid Go import path") || !strings.Contains(err.Error(), "Aux") {
		t.Errorf("Module m.example/Aux/x: err = %v, want one saying it is not a valid Go import path because of Aux", err)
	}
}
