package gen_test

import (
	"bytes"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

// FuzzGenerate feeds IDL the parser accepts to the generator: it must not
// panic, and what it returns must be Go that parses and that gofmt leaves
// unchanged (most of it is laid out by the generator itself).
func FuzzGenerate(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(idlTestdata, "*.thrift"))
	paths = append(paths, filepath.Join("testdata", "behavior.thrift"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := thrift.Parse("fuzz.thrift", src, thrift.ParseOptions{ReadFile: func(string) ([]byte, error) { return nil, os.ErrNotExist }})
		if err != nil {
			return
		}
		files, err := gen.Generate(file, gen.Options{Module: "m.example/fuzz"})
		if err != nil {
			return
		}
		for _, gf := range files {
			if _, err := parser.ParseFile(token.NewFileSet(), gf.Path, gf.Content, 0); err != nil {
				t.Fatalf("generated Go does not parse: %v\n%s", err, gf.Content)
			}
			if f, err := format.Source(gf.Content); err != nil || !bytes.Equal(f, gf.Content) {
				t.Fatalf("generated Go is not gofmt-formatted (%v):\n%s", err, firstDiff(string(f), string(gf.Content)))
			}
		}
	})
}
