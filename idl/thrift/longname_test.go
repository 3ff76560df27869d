package thrift_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// TestManyDottedNameLinear checks that a qualified name with many dots is
// looked up in time linear in its length: every prefix before a dot was
// tried as an include name, hashing it, so a name of 200,000 parts (800 KB)
// in a file with ten includes took seconds, and a few MB took minutes.
func TestManyDottedNameLinear(t *testing.T) {
	files := map[string]string{}
	var b strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "include \"z%d.thrift\"\n", i)
		files[fmt.Sprintf("z%d.thrift", i)] = "struct Q {}\n"
	}
	name := strings.Repeat("a.", 200000) + "Q"
	fmt.Fprintf(&b, "struct S { 1: %s x = %s }\n", name, name)
	start := time.Now()
	_, err := thrift.Parse("m.thrift", []byte(b.String()), thrift.ParseOptions{ReadFile: memFS(files)})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), `no include named "a"`) {
		t.Fatalf("err = %.200v, want one saying there is no include named \"a\"", err)
	}
	if took > time.Second {
		t.Fatalf("looking up a name of 200,000 parts took %v, want well under a second", took)
	}
}
