package thrift

import "fmt"

// The types of an [ApplicationException], as Apache Thrift numbers them.
const (
	ExceptionUnknown               int32 = 0
	ExceptionUnknownMethod         int32 = 1
	ExceptionInvalidMessageType    int32 = 2
	ExceptionWrongMethodName       int32 = 3
	ExceptionBadSequenceID         int32 = 4
	ExceptionMissingResult         int32 = 5
	ExceptionInternalError         int32 = 6
	ExceptionProtocolError         int32 = 7
	ExceptionInvalidTransform      int32 = 8
	ExceptionInvalidProtocol       int32 = 9
	ExceptionUnsupportedClientType int32 = 10
)

var exceptionNames = [...]string{
	"UNKNOWN", "UNKNOWN_METHOD", "INVALID_MESSAGE_TYPE", "WRONG_METHOD_NAME",
	"BAD_SEQUENCE_ID", "MISSING_RESULT", "INTERNAL_ERROR", "PROTOCOL_ERROR",
	"INVALID_TRANSFORM", "INVALID_PROTOCOL", "UNSUPPORTED_CLIENT_TYPE",
}

// ApplicationException is Thrift's TApplicationException: the error a server
// sends in an EXCEPTION message when the call itself failed (unknown method,
// undecodable request, handler failure). On the wire it is a struct with
// field 1 the message (string) and field 2 the type (i32).
type ApplicationException struct {
	Type    int32
	Message string
}

// NewApplicationException returns an exception of type t with message msg.
func NewApplicationException(t int32, msg string) *ApplicationException {
	return &ApplicationException{Type: t, Message: msg}
}

// TypeName returns the type's Apache name, e.g. "UNKNOWN_METHOD".
func (e *ApplicationException) TypeName() string {
	if e.Type >= 0 && int(e.Type) < len(exceptionNames) {
		return exceptionNames[e.Type]
	}
	return fmt.Sprintf("TYPE_%d", e.Type)
}

// Error returns "thrift: application exception TYPE: message".
func (e *ApplicationException) Error() string {
	if e.Message == "" {
		return "thrift: application exception " + e.TypeName()
	}
	return "thrift: application exception " + e.TypeName() + ": " + e.Message
}

// BLength returns the binary encoded size.
func (e *ApplicationException) BLength() int {
	return FieldBeginLength + Binary.StringLength(e.Message) + FieldBeginLength + I32Length + FieldStopLength
}

// FastWrite writes e with the binary protocol: message, type, stop.
func (e *ApplicationException) FastWrite(b []byte) int {
	n := Binary.WriteFieldBegin(b, STRING, 1)
	n += Binary.WriteString(b[n:], e.Message)
	n += Binary.WriteFieldBegin(b[n:], I32, 2)
	n += Binary.WriteI32(b[n:], e.Type)
	return n + Binary.WriteFieldStop(b[n:])
}

// FastRead reads e with the binary protocol, skipping unknown fields and
// fields of an unexpected type.
func (e *ApplicationException) FastRead(b []byte) (int, error) {
	var msg string
	var typ int32
	n := 0
	for {
		t, id, m, err := Binary.ReadFieldBegin(b[n:])
		if err != nil {
			return 0, err
		}
		n += m
		if t == STOP {
			break
		}
		switch {
		case id == 1 && t == STRING:
			msg, m, err = Binary.ReadString(b[n:])
		case id == 2 && t == I32:
			typ, m, err = Binary.ReadI32(b[n:])
		default:
			m, err = Binary.SkipDepth(b[n:], t, 1)
		}
		if err != nil {
			return 0, err
		}
		n += m
	}
	e.Message, e.Type = msg, typ
	return n, nil
}

// BLengthCompact returns the compact encoded size.
func (e *ApplicationException) BLengthCompact() int {
	return 1 + Compact.StringLength(e.Message) + 1 + Compact.I32Length(e.Type) + 1
}

// FastWriteCompact writes e with the compact protocol.
func (e *ApplicationException) FastWriteCompact(b []byte) int {
	n := Compact.WriteFieldBegin(b, STRING, 1, 0)
	n += Compact.WriteString(b[n:], e.Message)
	n += Compact.WriteFieldBegin(b[n:], I32, 2, 1)
	n += Compact.WriteI32(b[n:], e.Type)
	return n + Compact.WriteFieldStop(b[n:])
}

// FastReadCompact reads e with the compact protocol, skipping unknown fields.
func (e *ApplicationException) FastReadCompact(b []byte) (int, error) {
	var msg string
	var typ int32
	var last int16
	n := 0
	for {
		t, id, _, hasBool, m, err := Compact.ReadFieldBegin(b[n:], last)
		if err != nil {
			return 0, err
		}
		n += m
		if t == STOP {
			break
		}
		last = id
		switch {
		case hasBool:
			continue
		case id == 1 && t == STRING:
			msg, m, err = Compact.ReadString(b[n:])
		case id == 2 && t == I32:
			typ, m, err = Compact.ReadI32(b[n:])
		default:
			m, err = Compact.SkipDepth(b[n:], t, 1)
		}
		if err != nil {
			return 0, err
		}
		n += m
	}
	e.Message, e.Type = msg, typ
	return n, nil
}
