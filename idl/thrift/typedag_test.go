package thrift_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// TestSharedTypedefsCheckedOnce checks that types built from typedefs that
// each use the one before twice (typedef map<T0,T0> T1, map<T1,T1> T2, ...)
// are checked in time linear in the number of typedefs: the checks of a
// constant's type and of one constant used as another's value walked the
// types written out in full, 2^n nodes, so 40 such lines took hours.
func TestSharedTypedefsCheckedOnce(t *testing.T) {
	const n = 26
	var b strings.Builder
	b.WriteString("typedef map<i32,i32> T0\ntypedef map<i32,i32> U0\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "typedef map<T%d,T%d> T%d\ntypedef map<U%d,U%d> U%d\n", i-1, i-1, i, i-1, i-1, i)
	}
	fmt.Fprintf(&b, "const T%d A = {}\nconst U%d B = A\nconst T%d C = A\n", n-1, n-1, n-1)
	fmt.Fprintf(&b, "const list<T%d> L = [A]\n", n-1)
	start := time.Now()
	_, err := thrift.Parse("m.thrift", []byte(b.String()), thrift.ParseOptions{})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took > time.Second {
		t.Fatalf("parsing %d typedefs that each use the one before twice took %v, want well under a second", 2*n, took)
	}
}
