package thrift

import "fmt"

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
