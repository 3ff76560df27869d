package thrift_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// linkWriter records what WriteDirect receives.
type linkWriter struct {
	got       [][]byte
	remainCap []int
	fail      bool
}

func (w *linkWriter) WriteDirect(p []byte, remainCap int) error {
	if w.fail {
		return errors.New("no room for a link")
	}
	w.got = append(w.got, p)
	w.remainCap = append(w.remainCap, remainCap)
	return nil
}

func TestNocopyWriters(t *testing.T) {
	big := bytes.Repeat([]byte{'q'}, thrift.NocopyThreshold)
	small := big[:thrift.NocopyThreshold-1]
	type writeFn func(b []byte, w thrift.NocopyWriter, v []byte) int
	cases := []struct {
		name   string
		write  writeFn
		length func([]byte) int
		hdr    int
	}{
		{"binary/bytes", bp.WriteBinaryNocopy, bp.BinaryLength, 4},
		{"binary/string", func(b []byte, w thrift.NocopyWriter, v []byte) int { return bp.WriteStringNocopy(b, w, string(v)) }, bp.BinaryLength, 4},
		{"compact/bytes", cp.WriteBinaryNocopy, cp.BinaryLength, 2},
		{"compact/string", func(b []byte, w thrift.NocopyWriter, v []byte) int { return cp.WriteStringNocopy(b, w, string(v)) }, cp.BinaryLength, 2},
	}
	for _, c := range cases {
		// Below the threshold, and with a nil writer: copied like WriteBinary.
		for _, v := range [][]byte{small, big} {
			buf := make([]byte, c.length(v))
			w := &linkWriter{}
			var n int
			if len(v) == len(big) {
				n = c.write(buf, nil, v)
			} else {
				n = c.write(buf, w, v)
			}
			if n != len(buf) || !bytes.Equal(buf[c.hdr:], v) || len(w.got) != 0 {
				t.Fatalf("%s: copy path wrote %d of %d, linked %d", c.name, n, len(buf), len(w.got))
			}
		}
		// At the threshold: only the length in b, v linked by reference.
		buf := make([]byte, c.length(big)+10)
		w := &linkWriter{}
		n := c.write(buf, w, big)
		if n != c.hdr || len(w.got) != 1 || len(w.got[0]) != len(big) || w.remainCap[0] != len(buf)-c.hdr {
			t.Fatalf("%s: nocopy path returned %d, links %d, remainCap %v", c.name, n, len(w.got), w.remainCap)
		}
		if c.name == "binary/bytes" && &w.got[0][0] != &big[0] {
			t.Fatalf("%s: the linked slice is a copy", c.name)
		}
		// The length prefix written is the full length: reading the header plus
		// the linked bytes gives v back.
		joined := append(append([]byte(nil), buf[:n]...), w.got[0]...)
		var back []byte
		var err error
		if c.hdr == 4 {
			back, _, err = bp.ReadBinary(joined)
		} else {
			back, _, err = cp.ReadBinary(joined)
		}
		if err != nil || !bytes.Equal(back, big) {
			t.Fatalf("%s: read back %d bytes, %v", c.name, len(back), err)
		}
		// If the writer refuses, the bytes are copied after all.
		w = &linkWriter{fail: true}
		n = c.write(buf, w, big)
		if n != c.length(big) || !bytes.Equal(buf[c.hdr:n], big) {
			t.Fatalf("%s: fallback wrote %d", c.name, n)
		}
	}
}

func TestGeneratedSupport(t *testing.T) {
	if err := thrift.CheckDepth(64); err != nil {
		t.Fatal(err)
	}
	err := thrift.CheckDepth(65)
	wantKind(t, err, thrift.DepthLimit)
	if !strings.Contains(err.Error(), "depth 65 exceeds the limit of 64") {
		t.Fatalf("message: %v", err)
	}
	err = thrift.MissingRequiredError("User", "id")
	wantKind(t, err, thrift.InvalidData)
	if err.Error() != `thrift: required field "id" of struct User is missing` {
		t.Fatalf("message: %v", err)
	}
	err = thrift.ElemTypeError("User.tags", thrift.I32, thrift.STRING)
	wantKind(t, err, thrift.InvalidData)
	if err.Error() != "thrift: User.tags: element type I32 on the wire, want STRING" {
		t.Fatalf("message: %v", err)
	}
	// SkipDepth: a value at depth d may nest MaxDepth-d further levels.
	for _, p := range []struct {
		name string
		skip func([]byte, TType, int) (int, error)
		pr   proto
	}{{"binary", bp.SkipDepth, binaryProto}, {"compact", cp.SkipDepth, compactProto}} {
		in := nested(p.pr, thrift.STRUCT, 4)
		if n, err := p.skip(in, thrift.STRUCT, 60); err != nil || n != len(in) {
			t.Fatalf("%s SkipDepth at 60: %d %v", p.name, n, err)
		}
		_, err := p.skip(in, thrift.STRUCT, 61)
		wantKind(t, err, thrift.DepthLimit)
		// Scalars skip at any depth.
		b := make([]byte, 8)
		n := p.pr.i32(b, 5)
		if m, err := p.skip(b[:n], thrift.I32, 64); err != nil || m != n {
			t.Fatalf("%s scalar at max depth: %d %v", p.name, m, err)
		}
	}
}

func TestNamesAndErrors(t *testing.T) {
	if thrift.I64.String() != "I64" || thrift.UUID.String() != "UUID" || thrift.TType(99).String() != "TType(99)" {
		t.Fatal("TType.String")
	}
	if thrift.ONEWAY.String() != "ONEWAY" || thrift.MessageType(9).String() != "MessageType(9)" {
		t.Fatal("MessageType.String")
	}
	sentinels := map[thrift.ErrorKind]error{
		thrift.UnexpectedEOF: thrift.ErrUnexpectedEOF, thrift.InvalidData: thrift.ErrInvalidData,
		thrift.NegativeSize: thrift.ErrNegativeSize, thrift.SizeLimit: thrift.ErrSizeLimit,
		thrift.DepthLimit: thrift.ErrDepthLimit, thrift.BadVersion: thrift.ErrBadVersion,
		thrift.NotImplemented: thrift.ErrNotImplemented,
	}
	for k, s := range sentinels {
		err := &thrift.ProtocolError{Kind: k, Msg: "x"}
		for k2, s2 := range sentinels {
			if errors.Is(err, s2) != (k == k2) {
				t.Fatalf("errors.Is(%v, sentinel %v) wrong", k, k2)
			}
		}
		if !strings.HasPrefix(s.Error(), "thrift: ") || strings.HasPrefix(k.String(), "ErrorKind(") {
			t.Fatalf("sentinel %v prints %q", k, s.Error())
		}
	}
	if thrift.ErrShortBuffer != thrift.ErrUnexpectedEOF {
		t.Fatal("ErrShortBuffer is not ErrUnexpectedEOF")
	}
	// A sentinel is not "Is" a specific error (only the other way round).
	if errors.Is(thrift.ErrSizeLimit, &thrift.ProtocolError{Kind: thrift.SizeLimit, Msg: "x"}) {
		t.Fatal("sentinel matched a specific error")
	}
	if thrift.KindOf(errors.New("other")) != 0 {
		t.Fatal("KindOf of a foreign error")
	}
	// Skip errors say where they happened.
	in := everything(newEnc(binaryProto)).bytes()
	_, err := bp.Skip(in[:20], thrift.STRUCT, 0)
	if !strings.Contains(err.Error(), "(at byte ") {
		t.Fatalf("Skip error without position: %v", err)
	}
}

// shown is a struct as generated code declares it: optional fields are
// pointers, structs are pointers with a String method.
type shown struct {
	Code  *int32
	Why   *string
	Inner *shownInner
	N     int64
	Tags  []string
	kept  []byte
}

type shownInner struct{ A int32 }

func (p *shownInner) String() string { return thrift.StructString("shownInner", p) }

func TestStructStringPrintsValues(t *testing.T) {
	code, why := int32(42), "because"
	got := thrift.StructString("shown", &shown{Code: &code, Why: &why, Inner: &shownInner{A: 1}, N: 7, Tags: []string{"x"}, kept: []byte{1}})
	if want := "shown({Code:42 Why:because Inner:shownInner({A:1}) N:7 Tags:[x]})"; got != want {
		t.Errorf("StructString = %q, want %q", got, want)
	}
	got = thrift.StructString("shown", &shown{})
	if want := "shown({Code:<nil> Why:<nil> Inner:<nil> N:0 Tags:[]})"; got != want {
		t.Errorf("StructString of unset fields = %q, want %q", got, want)
	}
	if got := thrift.StructString("shown", (*shown)(nil)); got != "<nil>" {
		t.Errorf("StructString(nil) = %q, want <nil>", got)
	}
}

func TestUnionFieldsError(t *testing.T) {
	err := thrift.UnionFieldsError("Choice", 2)
	var pe *thrift.ProtocolError
	if !errors.As(err, &pe) || pe.Kind != thrift.InvalidData || !strings.Contains(err.Error(), "union Choice has 2 fields set") {
		t.Errorf("UnionFieldsError = %v (%T), want an InvalidData ProtocolError naming Choice and 2 fields", err, err)
	}
}
