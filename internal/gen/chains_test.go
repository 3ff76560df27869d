package gen_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

// allocated returns the bytes fn allocated (with Generate's formatting
// goroutines; no test of this package runs in parallel).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// parseChain parses name: service or struct declarations made by decl(i)
// for i from 0 to n.
func parseChain(t *testing.T, name string, n int, decl func(i int) string) *thrift.File {
	t.Helper()
	var b strings.Builder
	for i := 0; i <= n; i++ {
		b.WriteString(decl(i))
		b.WriteByte('\n')
	}
	f, err := thrift.Parse(name, []byte(b.String()), thrift.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStructChainLinear: over a chain of structs each holding the next one,
// whether a struct can hold a union (it gets Validate) or a string was found
// by walking the chain below it, the answer kept only for the struct asked
// about: quadratic when the chain ends in a union or a string (8,000
// structs took 8 s and 5.7 GB, 100,000 more than 5 minutes). The same chain
// ending in a struct of an i32 is the measure: the walks may not make it
// cost twice as much (before the fix: 8 and 15 times as much).
func TestStructChainLinear(t *testing.T) {
	const n = 8000
	generate := func(last string) ([]gen.File, uint64) {
		f := parseChain(t, "structs.thrift", n, func(i int) string {
			if i == n {
				return fmt.Sprintf(last, n)
			}
			return fmt.Sprintf("struct S%d { 1: S%d next }", i, i+1)
		})
		var err error
		var files []gen.File
		size := allocated(func() { files, err = gen.Generate(f, gen.Options{Module: "m.example/structs"}) })
		if err != nil {
			t.Fatal(err)
		}
		return files, size
	}
	_, base := generate("struct S%d { 1: i32 a }")
	for _, last := range []string{"union S%d { 1: i32 a, 2: i64 b }", "struct S%d { 1: string s }"} {
		files, size := generate(last)
		if strings.HasPrefix(last, "union") && !strings.Contains(string(files[0].Content), "func (p *S0) Validate() error {") {
			t.Error("S0, which holds a union through the chain, has no Validate method")
		}
		if size > 2*base {
			t.Errorf("%s: Generate allocated %d MiB for a chain of %d structs ending in it, %d MiB for one ending in an i32 struct; want under twice as much", fmt.Sprintf(last, n), size>>20, n, base>>20)
		}
	}
}

// TestLargeFileBlamesTheFile: a file of many small structs passes the bound
// on the output at one of them; the error must say that the file is too
// large (and split it), not blame that struct's nested containers, which it
// has none of.
func TestLargeFileBlamesTheFile(t *testing.T) {
	const n = 20000
	f := parseChain(t, "big.thrift", n, func(i int) string {
		return fmt.Sprintf("struct S%d { 1: i32 a }", i)
	})
	_, err := gen.Generate(f, gen.Options{Module: "m.example/big"})
	if err == nil {
		t.Fatalf("Generate of %d structs succeeded; want the 64 MiB bound", n+1)
	}
	msg := err.Error()
	if strings.Contains(msg, "container") || !strings.Contains(msg, "split") || !strings.Contains(msg, "big.thrift") {
		t.Fatalf("error %q: want one that says the file's code passes the bound and to split it, not one blaming nested containers", msg)
	}
}
