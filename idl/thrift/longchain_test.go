package thrift_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// TestLongChainsResolve checks that Resolved and Target follow chains of
// typedefs and constants of any length (the checks accept them: they follow
// every chain to its end), so that values are checked against the type at
// the end and constants end at their literal.
func TestLongChainsResolve(t *testing.T) {
	const n = 1000
	var b strings.Builder
	b.WriteString("typedef i32 T0\nconst i32 C0 = 7\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "typedef T%d T%d\nconst i32 C%d = C%d\n", i-1, i, i, i-1)
	}
	fmt.Fprintf(&b, "struct S { 1: T%d x = C%d }\n", n-1, n-1)
	f, err := thrift.Parse("m.thrift", []byte(b.String()), thrift.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fd := f.Structs[0].Fields[0]
	if rt := fd.Type.Resolved(); rt.Kind != thrift.TypeI32 {
		t.Errorf("Resolved of T%d is %v (kind %v), want i32", n-1, rt, rt.Kind)
	}
	if v := fd.Default.Target(); v.Kind != thrift.ConstInt || v.Int != 7 {
		t.Errorf("Target of C%d is %s, want 7", n-1, v.IDLString())
	}
	// A value the type at the end of the chain cannot hold is refused.
	bad := b.String() + fmt.Sprintf("struct U { 1: T%d y = \"text\" }\n", n-1)
	_, err = thrift.Parse("m.thrift", []byte(bad), thrift.ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), `expected T999, found string "text"`) {
		t.Errorf("string default of a field of a %d-link typedef chain of i32: err = %v, want expected T999, found string", n, err)
	}
}

// TestResolvedStopsOnCycle checks that Resolved and Target, given a cycle
// the checks would have refused, return rather than loop.
func TestResolvedStopsOnCycle(t *testing.T) {
	a := &thrift.Typedef{Name: "A"}
	b := &thrift.Typedef{Name: "B"}
	a.Type = &thrift.Type{Kind: thrift.TypeNamed, Name: "B", Ref: b}
	b.Type = &thrift.Type{Kind: thrift.TypeNamed, Name: "A", Ref: a}
	if rt := a.Type.Resolved(); rt != a.Type && rt != b.Type {
		t.Errorf("Resolved in a cycle returned %v, want a type of the cycle", rt)
	}
	c := &thrift.Const{Name: "C"}
	d := &thrift.Const{Name: "D"}
	c.Value = &thrift.ConstValue{Kind: thrift.ConstIdent, Ident: "D", Const: d}
	d.Value = &thrift.ConstValue{Kind: thrift.ConstIdent, Ident: "C", Const: c}
	if v := c.Value.Target(); v != c.Value && v != d.Value {
		t.Errorf("Target in a cycle returned %v, want a value of the cycle", v)
	}
}

// TestChainsBounded checks that chains of more than 1000 typedefs or
// constants are refused at the link that passes the bound, quickly: every
// use of such a chain follows it link by link.
func TestChainsBounded(t *testing.T) {
	const n = 100000
	var typedefs, consts strings.Builder
	typedefs.WriteString("typedef i32 T0\n")
	consts.WriteString("const i32 C0 = 7\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&typedefs, "typedef T%d T%d\n", i-1, i)
		fmt.Fprintf(&consts, "const i32 C%d = C%d\n", i, i-1)
	}
	fmt.Fprintf(&typedefs, "struct S { 1: T%d x = 5 }\n", n-1)
	for _, c := range []struct{ src, want string }{
		{typedefs.String(), "m.thrift:1001:1: typedef T1000 is the end of a chain of more than 1000 typedefs"},
		{consts.String(), "m.thrift:1001:1: constant C1000 is the end of a chain of more than 1000 constants"},
	} {
		start := time.Now()
		_, err := thrift.Parse("m.thrift", []byte(c.src), thrift.ParseOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error = %.300v, want one error beginning %q", err, c.want)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("took %v", d)
		}
	}
}
