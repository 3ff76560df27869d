package thrift_test

import (
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// TestSetConstantElementsUnique checks that a set constant or set default
// whose elements repeat (after following constants and enum values, as map
// keys are compared) is reported at the repeat; it was accepted and written
// as a set holding one value twice, which Apache's Go writer refuses to
// send.
func TestSetConstantElementsUnique(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"const set<i32> S = [1, 1]\n",
			`m.thrift:1:24: value of const "S": duplicate set element int 1, the same as int 1 at 1:21`},
		{"enum E { A = 1 }\nconst i32 K = 1\nstruct T { 1: set<i32> s = [E.A, K] }\n",
			`m.thrift:3:34: default value of field "s": duplicate set element "K", the same as "E.A" at 3:29`},
	} {
		_, err := thrift.Parse("m.thrift", []byte(c.src), thrift.ParseOptions{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v, want %s", c.src, err, c.want)
		}
	}
	if _, err := thrift.Parse("m.thrift", []byte("const list<i32> L = [1, 1]\nconst set<i32> S = [1, 2]\n"), thrift.ParseOptions{}); err != nil {
		t.Errorf("a list with a repeated element, a set without: %v", err)
	}
}

// TestSetConstantCompositeElementsUnique: the check above for lists, sets,
// maps and structs as set elements and map keys, compared as a writer
// comparing the Go values would (lists in order, maps and struct fields
// whatever their order); these were accepted, and Apache's Go writer
// refuses to send such a set.
func TestSetConstantCompositeElementsUnique(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"const set<list<i32>> S = [[1, 2], [1, 0x2]]\n",
			`m.thrift:1:35: value of const "S": duplicate set element list [1, 2], the same as list [1, 2] at 1:27`},
		{"const set<map<string, i32>> S = [{\"a\": 1, \"b\": 2}, {\"b\": 2, \"a\": 1}]\n",
			`m.thrift:1:52: value of const "S": duplicate set element map {"b": 2, "a": 1}, the same as map {"a": 1, "b": 2} at 1:34`},
		{"struct P { 1: i32 x, 2: optional string y }\nconst P Q = {\"x\": 1}\nconst set<P> S = [{\"x\": 1}, Q]\n",
			`m.thrift:3:29: value of const "S": duplicate set element "Q", the same as map {"x": 1} at 3:19`},
		{"const map<list<string>, i32> M = {[\"a\"]: 1, [\"a\"]: 2}\n",
			`m.thrift:1:45: value of const "M": duplicate map key list ["a"], the same as list ["a"] at 1:35`},
	} {
		_, err := thrift.Parse("m.thrift", []byte(c.src), thrift.ParseOptions{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v, want %s", c.src, err, c.want)
		}
	}
	for _, src := range []string{
		"const set<list<i32>> S = [[1, 2], [2, 1]]\n",
		"const set<list<string>> S = [[\"a\", \"b\"], [\"ab\"]]\n",
		"struct P { 1: i32 x, 2: optional string y }\nconst set<P> S = [{\"x\": 1}, {\"x\": 1, \"y\": \"q\"}]\n",
		"const list<list<i32>> L = [[1], [1]]\n",
	} {
		if _, err := thrift.Parse("m.thrift", []byte(src), thrift.ParseOptions{}); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}
