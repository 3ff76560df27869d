package thrift

import (
	"fmt"
	"reflect"
	"strings"
)

// This file holds small helpers that generated code calls, so the logic stays
// in the runtime and generated files stay thin.

// CheckDepth returns nil if a struct at nesting depth depth (1 for the
// outermost) is within the configured MaxDepth, else a DepthLimit error.
// Generated readers call it before reading a nested struct.
func CheckDepth(depth int) error {
	if max := maxDepth.Load(); int64(depth) > max {
		return newError(DepthLimit, "struct nesting depth %d exceeds the limit of %d", depth, max)
	}
	return nil
}

// MissingRequiredError reports a required field absent from the input.
func MissingRequiredError(structName, fieldName string) error {
	return &ProtocolError{Kind: InvalidData, Msg: fmt.Sprintf("required field %q of struct %s is missing", fieldName, structName)}
}

// ElemTypeError reports a container whose declared element type is not the
// one the IDL says; where names the field or container.
func ElemTypeError(where string, got, want TType) error {
	return &ProtocolError{Kind: InvalidData, Msg: fmt.Sprintf("%s: element type %s on the wire, want %s", where, got, want)}
}

// StructString is the String method of generated structs (and so the Error
// method of exceptions): "Name({F1:v1 F2:v2})", in the fields' order. p is a
// pointer to the struct. The fields optional scalars, strings, enums and
// uuids are held in print the value pointed to, or <nil> when unset (where
// fmt's %+v would print their addresses); the struct's unexported fields
// (unknown fields kept) are left out.
func StructString(name string, p any) string {
	v := reflect.ValueOf(p)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "<nil>"
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return fmt.Sprintf("%s(%+v)", name, p)
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteString("({")
	t := v.Type()
	sep := ""
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		// Pointers to structs stay: their String method prints them.
		if fv.Kind() == reflect.Pointer && !fv.IsNil() && fv.Elem().Kind() != reflect.Struct {
			fv = fv.Elem()
		}
		fmt.Fprintf(&b, "%s%s:%+v", sep, f.Name, fv.Interface())
		sep = " "
	}
	b.WriteString("})")
	return b.String()
}

// UnionFieldsError reports a union with more than one field set (set of
// them), which is not a Thrift union: generated Validate methods return it,
// and generated clients and handlers refuse to send such a union.
func UnionFieldsError(union string, set int) error {
	return &ProtocolError{Kind: InvalidData, Msg: fmt.Sprintf("union %s has %d fields set; a union holds at most one", union, set)}
}

// KeyValue returns the container that the map key p points to, or the
// empty container when p is nil. Go map keys cannot be slices or maps, so
// generated code holds keys of container types as pointers; it writes and
// sizes them through KeyValue, so that a nil key is written as an empty
// container (as a nil struct is written as an empty struct) rather than
// panicking.
func KeyValue[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
