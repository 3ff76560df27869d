package gen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

// TestRenamedFieldsStayDistinct checks that the Go names the generator gives
// fields to keep them off its methods (init_default becomes InitDefault_) do
// not then meet another field or accessor of the same name: the checks
// accept these structs, and the Go generated for them declared
// InitDefault_ twice, or a field GetInitDefault_ beside the getter of
// InitDefault_, and did not compile.
func TestRenamedFieldsStayDistinct(t *testing.T) {
	src := `namespace go m
struct Twice { 1: i32 init_default, 2: i32 init_default_ }
struct Getter { 1: i32 get_init_default_, 2: optional i32 init_default }
struct IsSet { 1: optional i32 init_default, 2: i32 is_set_init_default_ }
service Svc { i32 f(1: i32 init_default, 2: i32 init_default_) }
`
	f, err := thrift.Parse("m.thrift", []byte(src), thrift.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(f, gen.Options{Module: "m.example/x"})
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile(token.NewFileSet(), files[0].Path, files[0].Content, 0)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string][]string{}
	methods := map[string]map[string]bool{}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				ts, ok := sp.(*ast.TypeSpec)
				if !ok {
					continue
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						for _, id := range fl.Names {
							fields[ts.Name.Name] = append(fields[ts.Name.Name], id.Name)
						}
					}
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) != 1 {
				continue
			}
			rt := d.Recv.List[0].Type
			if st, ok := rt.(*ast.StarExpr); ok {
				rt = st.X
			}
			if id, ok := rt.(*ast.Ident); ok {
				if methods[id.Name] == nil {
					methods[id.Name] = map[string]bool{}
				}
				methods[id.Name][d.Name.Name] = true
			}
		}
	}
	for _, typ := range []string{"Twice", "Getter", "IsSet", "SvcFArgs"} {
		if len(fields[typ]) != 2 {
			t.Fatalf("struct %s has fields %v, want 2", typ, fields[typ])
		}
		seen := map[string]bool{}
		for _, name := range fields[typ] {
			if seen[name] {
				t.Errorf("struct %s declares field %s twice (fields %v)", typ, name, fields[typ])
			}
			seen[name] = true
			if methods[typ][name] {
				t.Errorf("struct %s has a field and a method both named %s", typ, name)
			}
		}
	}
}
