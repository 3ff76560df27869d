package interop_test

import (
	"context"
	"testing"

	athrift "github.com/apache/thrift/lib/go/thrift"

	ae "github.com/petrel-rpc/petrel/interop/gen-apache/everything"
	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
)

// FuzzPetrelBytesReadByApache feeds arbitrary bytes to Petrel's readers
// (binary and compact). Whatever Petrel accepts, it must write back as bytes
// that Apache reads to the same value that Petrel reads from them: Petrel
// never turns odd input into output a peer rejects or reads differently.
func FuzzPetrelBytesReadByApache(f *testing.F) {
	for _, p := range protocols {
		f.Add(p.name == "compact", p.petrelWrite(fullValue()))
		f.Add(p.name == "compact", p.petrelWrite(sparseValue()))
	}
	f.Fuzz(func(t *testing.T, compact bool, in []byte) {
		p := protocols[0]
		if compact {
			p = protocols[1]
		}
		v := new(pe.Everything)
		if _, err := p.petrelRead(v, in); err != nil {
			return
		}
		out := p.petrelWrite(v)
		again := new(pe.Everything)
		if n, err := p.petrelRead(again, out); err != nil || n != len(out) {
			t.Fatalf("%s: petrel cannot read its own %d bytes: n=%d, err %v", p.name, len(out), n, err)
		}
		buf := athrift.NewTMemoryBuffer()
		buf.Write(out)
		a := ae.NewEverything()
		if err := a.Read(context.Background(), p.apache(buf)); err != nil {
			t.Fatalf("%s: apache rejects petrel's %d bytes: %v\n%x", p.name, len(out), err, out)
		}
		if d := diff(a, toApache(again)); d != "" {
			t.Fatalf("%s: apache and petrel read petrel's bytes differently: %s", p.name, d)
		}
	})
}
