package thrift_test

import (
	"fmt"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

func TestGoName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"foo", "Foo"},
		{"foo_bar", "FooBar"},
		{"FooBar", "FooBar"},
		{"fooBar", "FooBar"},
		{"user_id", "UserID"},
		{"userId", "UserID"},
		{"UserID", "UserID"},
		{"id", "ID"},
		{"Id", "ID"},
		{"url", "URL"},
		{"base_url", "BaseURL"},
		{"HTTPServer", "HTTPServer"},
		{"http_server", "HTTPServer"},
		{"XMLHttpRequest", "XMLHTTPRequest"},
		{"json_api", "JSONAPI"},
		{"uuid", "UUID"},
		{"ip_address", "IPAddress"},
		{"rpc_call", "RPCCall"},
		{"utf8String", "UTF8String"},
		{"field1", "Field1"},
		{"field1_name", "Field1Name"},
		{"v2_api", "V2API"},
		{"a1B", "A1B"},
		{"FOO_BAR", "FooBar"},
		{"TYPE", "Type"},
		{"MAX_ITEMS", "MaxItems"},
		{"USER_ID", "UserID"},
		{"HTTP_PORT", "HTTPPort"},
		{"V2_API", "V2API"},
		{"UTF8", "UTF8"},
		{"A", "A"},
		{"OK", "Ok"},
		{"FG", "Fg"},
		{"FOOBar", "FOOBar"},
		{"_type", "XType"},
		{"__type", "XType"},
		{"type_", "Type_"},
		{"a__b", "AB"},
		{"_", "X"},
		{"__", "X_"},
		{"", "X"},
		{"x", "X"},
		{"ns.Name", "NsName"},
		{"userIds", "UserIds"},
	}
	for _, c := range cases {
		if got := thrift.GoName(c.in); got != c.want {
			t.Errorf("GoName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestGoFieldName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"name", "Name"},
		{"user_id", "UserID"},
		{"read", "Read_"},
		{"write", "Write_"},
		{"string", "String_"},
		{"b_length", "BLength_"},
		{"fast_read_whole", "FastReadWhole_"},
		{"fast_read_whole_compact", "FastReadWholeCompact_"},
		{"error", "Error_"},
		{"reader", "Reader"},
	}
	for _, c := range cases {
		if got := thrift.GoFieldName(c.in); got != c.want {
			t.Errorf("GoFieldName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if !thrift.IsReservedMethodName("FastRead") || thrift.IsReservedMethodName("Name") {
		t.Error("IsReservedMethodName gives the wrong answer")
	}
}

func ExampleGoName() {
	fmt.Println(thrift.GoName("user_id"), thrift.GoName("httpServer"), thrift.GoName("_type"))
	// Output: UserID HTTPServer XType
}
