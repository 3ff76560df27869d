package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	athrift "github.com/apache/thrift/lib/go/thrift"

	"github.com/petrel-rpc/petrel/codec/thrift"
	ae "github.com/petrel-rpc/petrel/interop/gen-apache/everything"
	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
)

// protocol is one wire format, as each side speaks it.
type protocol struct {
	name        string
	apache      func(athrift.TTransport) athrift.TProtocol
	petrelWrite func(*pe.Everything) []byte
	petrelRead  func(*pe.Everything, []byte) (int, error)
}

var protocols = []protocol{
	{
		name:        "binary",
		apache:      func(t athrift.TTransport) athrift.TProtocol { return athrift.NewTBinaryProtocolConf(t, nil) },
		petrelWrite: func(v *pe.Everything) []byte { return thrift.Marshal(v) },
		petrelRead:  (*pe.Everything).FastRead,
	},
	{
		name:        "compact",
		apache:      func(t athrift.TTransport) athrift.TProtocol { return athrift.NewTCompactProtocolConf(t, nil) },
		petrelWrite: func(v *pe.Everything) []byte { return thrift.MarshalCompact(v) },
		petrelRead:  (*pe.Everything).FastReadCompact,
	},
}

func apacheWrite(t *testing.T, p protocol, v *ae.Everything) []byte {
	t.Helper()
	ctx := context.Background()
	buf := athrift.NewTMemoryBuffer()
	proto := p.apache(buf)
	if err := v.Write(ctx, proto); err != nil {
		t.Fatalf("apache %s write: %v", p.name, err)
	}
	if err := proto.Flush(ctx); err != nil {
		t.Fatalf("apache %s flush: %v", p.name, err)
	}
	return buf.Bytes()
}

func apacheRead(t *testing.T, p protocol, b []byte) *ae.Everything {
	t.Helper()
	buf := athrift.NewTMemoryBuffer()
	buf.Write(b)
	v := ae.NewEverything()
	if err := v.Read(context.Background(), p.apache(buf)); err != nil {
		t.Fatalf("apache %s read of petrel's %d bytes: %v", p.name, len(b), err)
	}
	if buf.Len() != 0 {
		t.Fatalf("apache %s read left %d of petrel's %d bytes", p.name, buf.Len(), len(b))
	}
	return v
}

func petrelRead(t *testing.T, p protocol, b []byte) *pe.Everything {
	t.Helper()
	v := new(pe.Everything)
	n, err := p.petrelRead(v, b)
	if err != nil {
		t.Fatalf("petrel %s read of apache's %d bytes: %v", p.name, len(b), err)
	}
	if n != len(b) {
		t.Fatalf("petrel %s read consumed %d of apache's %d bytes", p.name, n, len(b))
	}
	return v
}

// checkBothWays writes v with each side and reads it with the other; the
// value read must equal the value written. With sameBytes, both writers must
// also produce identical bytes (they write fields in IDL order); otherwise
// (maps of several entries, iterated in random order) the same length.
func checkBothWays(t *testing.T, p protocol, v *pe.Everything, sameBytes bool) {
	t.Helper()
	want := toApache(v)

	// Petrel writes, Apache reads.
	pb := p.petrelWrite(v)
	if got := apacheRead(t, p, pb); diff(got, want) != "" {
		t.Fatalf("%s: petrel -> apache: %s", p.name, diff(got, want))
	}

	// Apache writes, Petrel reads.
	ab := apacheWrite(t, p, want)
	if got := petrelRead(t, p, ab); diff(got, v) != "" {
		t.Fatalf("%s: apache -> petrel: %s", p.name, diff(got, v))
	}

	if sameBytes && !bytes.Equal(pb, ab) {
		t.Fatalf("%s: petrel and apache bytes differ at offset %d (lengths %d, %d)\npetrel %x\napache %x",
			p.name, firstDiff(pb, ab), len(pb), len(ab), pb, ab)
	}
	if len(pb) != len(ab) {
		t.Fatalf("%s: petrel wrote %d bytes, apache %d", p.name, len(pb), len(ab))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestEveryTypeBothWays(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name+"/full", func(t *testing.T) { checkBothWays(t, p, fullValue(), true) })
		t.Run(p.name+"/sparse", func(t *testing.T) { checkBothWays(t, p, sparseValue(), true) })
		for i, c := range unionCases() {
			t.Run(fmt.Sprintf("%s/union%d", p.name, i), func(t *testing.T) {
				v := sparseValue()
				v.Choice = c
				checkBothWays(t, p, v, true)
			})
		}
	}
}

// unionCases sets each member of Choice in turn, empty values included.
func unionCases() []*pe.Choice {
	return []*pe.Choice{
		{Number: ptr(int32(-1))},
		{Text: ptr("")},
		{Inner: &pe.Inner{}},
		{Words: []string{}},
		{Raw: []byte{}},
		{Words: []string{"a", "b"}},
	}
}

func TestRandomValuesBothWays(t *testing.T) {
	const n = 200
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			for i := range n {
				v := randomValue(r)
				t.Run(fmt.Sprint(i), func(t *testing.T) { checkBothWays(t, p, v, false) })
			}
		})
	}
}
