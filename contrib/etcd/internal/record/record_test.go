package record_test

import (
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/contrib/etcd/internal/record"
	"github.com/petrel-rpc/petrel/discovery"
)

func TestRoundTrip(t *testing.T) {
	for _, in := range []discovery.Instance{
		{Address: "127.0.0.1:8888"},
		{Address: "[::1]:1", Weight: 7, Tags: map[string]string{"zone": "a", "": "empty key"}},
	} {
		v, err := record.Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := record.Decode([]byte(v))
		if err != nil || !discovery.Equal([]discovery.Instance{in}, []discovery.Instance{out}) {
			t.Fatalf("%+v -> %s -> %+v %v", in, v, out, err)
		}
	}
	if _, err := record.Decode([]byte(`{"weight":3}`)); !errors.Is(err, record.ErrNoAddress) {
		t.Fatalf("no address: %v", err)
	}
	if _, err := record.Decode([]byte(`{"address":`)); err == nil {
		t.Fatal("truncated JSON decoded")
	}
	if in, err := record.Decode([]byte(`{"address":"a:1","extra":[1,2]}`)); err != nil || in.Address != "a:1" {
		t.Fatalf("unknown field: %+v %v", in, err)
	}
}

// FuzzDecode: any bytes decode or fail without panicking, and what decodes
// encodes back to the same instance.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"address":"127.0.0.1:8888","weight":10,"tags":{"zone":"a"}}`))
	f.Add([]byte(`{"address":""}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := record.Decode(b)
		if err != nil {
			return
		}
		v, err := record.Encode(in)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", in, err)
		}
		out, err := record.Decode([]byte(v))
		if err != nil || !discovery.Equal([]discovery.Instance{in}, []discovery.Instance{out}) {
			t.Fatalf("%+v -> %s -> %+v %v", in, v, out, err)
		}
	})
}
