package thrift_test

import (
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// TestUnionConstantSetsOneField checks that a union constant or field
// default that sets two fields is reported at the second; it was accepted,
// and the generated value failed its own Validate (a client refused to send
// it) or put two fields of a union on the wire.
func TestUnionConstantSetsOneField(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"union U { 1: i32 a; 2: i32 b }\nconst U C = {\"a\": 1, \"b\": 2}\n",
			`m.thrift:2:22: value of const "C": union U sets at most one field, and field "b" is given beside "a" (at 2:14)`},
		{"union U { 1: i32 a; 2: i32 b }\nstruct T { 1: U u = {\"b\": 1, \"a\": 2} }\n",
			`m.thrift:2:30: default value of field "u": union U sets at most one field, and field "a" is given beside "b" (at 2:22)`},
	} {
		_, err := thrift.Parse("m.thrift", []byte(c.src), thrift.ParseOptions{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v, want %s", c.src, err, c.want)
		}
	}
	if _, err := thrift.Parse("m.thrift", []byte("union U { 1: i32 a; 2: i32 b }\nconst U C = {\"b\": 2}\nconst U E = {}\n"), thrift.ParseOptions{}); err != nil {
		t.Errorf("union constants with one field and none: %v", err)
	}
}
