package thrift_test

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

func TestApplicationExceptionBinary(t *testing.T) {
	e := thrift.NewApplicationException(thrift.ExceptionUnknownMethod, "no such method: foo")
	b := thrift.Marshal(e)
	if len(b) != e.BLength() {
		t.Fatalf("Marshal wrote %d bytes, BLength %d", len(b), e.BLength())
	}
	want := "0b0001" + "00000013" + hex.EncodeToString([]byte("no such method: foo")) + "080002" + "00000001" + "00"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("wire %s, want %s", got, want)
	}
	var got thrift.ApplicationException
	if err := thrift.Unmarshal(b, &got); err != nil || got != *e {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if e.Error() != "thrift: application exception UNKNOWN_METHOD: no such method: foo" {
		t.Fatalf("Error() = %q", e.Error())
	}
	var asErr error = e
	var target *thrift.ApplicationException
	if !errors.As(asErr, &target) || target.Type != thrift.ExceptionUnknownMethod {
		t.Fatal("errors.As failed")
	}
	// Unknown fields (before, between, after) are skipped; types out of the
	// named range still print.
	in := make([]byte, 128)
	n := bp.WriteFieldBegin(in, thrift.LIST, 9)
	n += bp.WriteListBegin(in[n:], thrift.I64, 1)
	n += bp.WriteI64(in[n:], 5)
	n += bp.WriteFieldBegin(in[n:], thrift.I32, 2)
	n += bp.WriteI32(in[n:], 77)
	n += bp.WriteFieldBegin(in[n:], thrift.I32, 1) // right id, wrong type
	n += bp.WriteI32(in[n:], 1)
	n += bp.WriteFieldStop(in[n:])
	got = thrift.ApplicationException{}
	m, err := got.FastRead(in[:n])
	if err != nil || m != n || got.Type != 77 || got.Message != "" {
		t.Fatalf("with unknown fields: %+v %d %v", got, m, err)
	}
	if got.Error() != "thrift: application exception TYPE_77" {
		t.Fatalf("Error() = %q", got.Error())
	}
	for i := range n {
		_, err := got.FastRead(in[:i])
		wantKind(t, err, thrift.UnexpectedEOF)
	}
}

func TestApplicationExceptionCompact(t *testing.T) {
	for typ := thrift.ExceptionUnknown; typ <= thrift.ExceptionUnsupportedClientType; typ++ {
		e := &thrift.ApplicationException{Type: typ, Message: "m"}
		b := thrift.MarshalCompact(e)
		if len(b) != e.BLengthCompact() {
			t.Fatalf("MarshalCompact wrote %d, BLengthCompact %d", len(b), e.BLengthCompact())
		}
		var got thrift.ApplicationException
		if err := thrift.UnmarshalCompact(b, &got); err != nil || got != *e {
			t.Fatalf("round trip %d: %+v %v", typ, got, err)
		}
		if got.TypeName() == "" || got.TypeName()[0] == 'T' {
			t.Fatalf("TypeName(%d) = %q", typ, got.TypeName())
		}
	}
	e := &thrift.ApplicationException{Type: thrift.ExceptionInternalError, Message: "boom"}
	if got := hex.EncodeToString(thrift.MarshalCompact(e)); got != "1804"+hex.EncodeToString([]byte("boom"))+"150c00" {
		t.Fatalf("compact wire %s", got)
	}
	// A bool field and a nested struct are skipped.
	in := make([]byte, 64)
	n := cp.WriteFieldBool(in, 3, 0, true)
	n += cp.WriteFieldBegin(in[n:], thrift.STRUCT, 4, 3)
	n += cp.WriteFieldBegin(in[n:], thrift.STRING, 1, 0)
	n += cp.WriteString(in[n:], "x")
	n += cp.WriteFieldStop(in[n:])
	n += cp.WriteFieldBegin(in[n:], thrift.I32, 2, 4)
	n += cp.WriteI32(in[n:], 6)
	n += cp.WriteFieldStop(in[n:])
	var got thrift.ApplicationException
	if m, err := got.FastReadCompact(in[:n]); err != nil || m != n || got.Type != 6 {
		t.Fatalf("compact with unknown fields: %+v %d %v", got, m, err)
	}
	for i := range n {
		_, err := got.FastReadCompact(in[:i])
		wantKind(t, err, thrift.UnexpectedEOF)
	}
}
