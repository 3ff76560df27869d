package thrift

import "context"

// MethodInfo describes one method of a Thrift service for the RPC runtime.
// Generated code fills it in; the runtime uses it to make the argument and
// result values of a call it receives or sends.
type MethodInfo struct {
	// Name is the method name as written in the IDL (the message name on
	// the wire).
	Name string
	// Oneway is true for `oneway` methods, which have no result.
	Oneway bool
	// NewArgs returns a new, empty argument struct (<Service><Method>Args).
	NewArgs func() FastCodec
	// NewResult returns a new, empty result struct (<Service><Method>Result,
	// whose field 0 is Success and whose other fields are the declared
	// exceptions). Nil for oneway methods.
	NewResult func() FastCodec
	// Handler calls the user's implementation: handler is the value given to
	// the server's RegisterService (the generated service interface), args
	// and result are values made by NewArgs and NewResult. It stores the
	// method's return value in result's Success field, and an exception
	// declared in the IDL in result's field for it (returning nil then). It
	// returns the handler's error only when that error is not a declared
	// exception. For oneway methods result is nil. Nil when the generated
	// code has no server side.
	Handler func(ctx context.Context, handler any, args, result FastCodec) error
}

// ServiceInfo describes a Thrift service: generated code declares one per
// service as <Service>ServiceInfo.
type ServiceInfo struct {
	// Name is the service name as written in the IDL.
	Name string
	// Extends is the base service as written after `extends` ("Base" or
	// "shared.Base"), or "".
	Extends string
	// Methods lists the service's methods, its own first, then those it
	// inherits, nearest base first.
	Methods []MethodInfo
}

// Method returns the method called name, or nil.
func (s *ServiceInfo) Method(name string) *MethodInfo {
	for i := range s.Methods {
		if s.Methods[i].Name == name {
			return &s.Methods[i]
		}
	}
	return nil
}
