package thrift_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// FuzzParse checks that no input makes the front end panic or hang, that
// every error carries a position, that errors come sorted, that parsing
// twice gives the same errors or tree, and that a file that passes the
// checks has every named type resolved.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.thrift")
	more, _ := filepath.Glob("testdata/broken/*.thrift")
	seeds = append(seeds, more...)
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, []byte("struct Inc { 1: i32 x }\nenum E { A }\nconst i32 C = 1\nservice B {}"))
	}
	f.Add([]byte(`include "inc.thrift" struct S { 1: inc.Inc a = {"x": inc.C} 2: inc.E e = inc.E.A } service T extends inc.B {}`),
		[]byte("struct Inc { 1: i32 x }\nenum E { A }\nconst i32 C = 1\nservice B {}"))
	f.Add([]byte("const list<i32> X = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]"), []byte(""))
	f.Fuzz(func(t *testing.T, main, inc []byte) {
		opts := thrift.ParseOptions{ReadFile: func(path string) ([]byte, error) {
			if filepath.Base(path) == "inc.thrift" {
				return inc, nil
			}
			return nil, fs.ErrNotExist
		}}
		file, err := thrift.Parse("fuzz.thrift", main, opts)
		// The same input gives the same result: no map order leaks into
		// the errors or the tree.
		file2, err2 := thrift.Parse("fuzz.thrift", main, opts)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("two parses differ:\n%v\n%v", err, err2)
		}
		if err == nil && dump(file) != dump(file2) {
			t.Fatalf("two parses give different trees:\n%s\n%s", dump(file), dump(file2))
		}
		if err != nil {
			if file != nil {
				t.Fatal("file returned along with errors")
			}
			var list thrift.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %T %v is not a non-empty ErrorList", err, err)
			}
			for i, e := range list {
				if e.Pos.Line < 1 && e.Pos.File == "fuzz.thrift" {
					t.Fatalf("error without a line: %v", e)
				}
				if i > 0 && e.Pos.Before(list[i-1].Pos) {
					t.Fatalf("errors not sorted: %v", err)
				}
			}
			return
		}
		_ = dump(file) // walks every node; panics on an unresolved type
	})
}
