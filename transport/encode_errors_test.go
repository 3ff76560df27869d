package transport_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/transport"
)

// TestTTHeaderEncodeErrorsNameTheField: a header that cannot be encoded is
// refused with an error naming the field at fault, its size and the limit.
func TestTTHeaderEncodeErrorsNameTheField(t *testing.T) {
	lb := buf.NewLinkBuffer()
	defer lb.Reset()
	long := strings.Repeat("x", 70000)
	for _, tc := range []struct {
		h    *transport.Header
		want []string
	}{
		{&transport.Header{StrInfo: map[string]string{long: "v"}}, []string{"INFO_KEYVALUE key \"xxx", "is 70000 bytes", "65535"}},
		{&transport.Header{StrInfo: map[string]string{"tenant": long}}, []string{`INFO_KEYVALUE value of key "tenant" is 70000 bytes`, "65535"}},
		{&transport.Header{IntInfo: map[uint16]string{9: long}}, []string{"INFO_INTKEYVALUE value of key 9 is 70000 bytes", "65535"}},
		{&transport.Header{ACLToken: long}, []string{"ACL token is 70000 bytes", "65535"}},
	} {
		_, err := transport.BeginFrame(lb, transport.TTHeader, tc.h, 1)
		if !errors.Is(err, transport.ErrHeaderTooLarge) {
			t.Fatalf("err = %v, want ErrHeaderTooLarge", err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
	}
	if lb.MallocLen() != 0 {
		t.Fatalf("a refused header left %d bytes", lb.MallocLen())
	}
}
