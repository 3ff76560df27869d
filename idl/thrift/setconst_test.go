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
