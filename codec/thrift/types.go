package thrift

import (
	"fmt"
	"sync/atomic"
)

// TType is the type tag of a value on the wire (binary protocol numbering;
// the compact protocol maps its own tags onto these).
type TType byte

// The Thrift types.
const (
	STOP   TType = 0
	VOID   TType = 1
	BOOL   TType = 2
	BYTE   TType = 3
	DOUBLE TType = 4
	I16    TType = 6
	I32    TType = 8
	I64    TType = 10
	STRING TType = 11
	STRUCT TType = 12
	MAP    TType = 13
	SET    TType = 14
	LIST   TType = 15
	UUID   TType = 16
)

var ttypeNames = [...]string{
	STOP: "STOP", VOID: "VOID", BOOL: "BOOL", BYTE: "BYTE", DOUBLE: "DOUBLE",
	I16: "I16", I32: "I32", I64: "I64", STRING: "STRING", STRUCT: "STRUCT",
	MAP: "MAP", SET: "SET", LIST: "LIST", UUID: "UUID",
}

// String returns the type's name, or "TType(n)" for an unknown tag.
func (t TType) String() string {
	if int(t) < len(ttypeNames) && ttypeNames[t] != "" {
		return ttypeNames[t]
	}
	return fmt.Sprintf("TType(%d)", byte(t))
}

// MessageType is the kind of an RPC message.
type MessageType int32

// The message types.
const (
	CALL      MessageType = 1
	REPLY     MessageType = 2
	EXCEPTION MessageType = 3
	ONEWAY    MessageType = 4
)

// String returns the message type's name.
func (t MessageType) String() string {
	switch t {
	case CALL:
		return "CALL"
	case REPLY:
		return "REPLY"
	case EXCEPTION:
		return "EXCEPTION"
	case ONEWAY:
		return "ONEWAY"
	}
	return fmt.Sprintf("MessageType(%d)", int32(t))
}

// Tuuid is the value of a Thrift uuid: 16 bytes, sent in this order on both
// protocols. (The [TType] of a uuid is [UUID].)
type Tuuid [16]byte

// Limits bound what a reader accepts. They are checked before anything is
// allocated. A zero field means the default.
type Limits struct {
	// MaxStringSize is the largest string or binary, in bytes. Default 16 MiB.
	MaxStringSize int
	// MaxContainerSize is the largest list, set or map, in elements (pairs for
	// a map). Default 16 Mi. Independently of it, a container must fit in the
	// bytes left: each element needs at least its smallest wire size.
	MaxContainerSize int
	// MaxDepth is how deeply structs and containers may nest when skipped,
	// and structs when read by generated code. Default 64, at most
	// [MaxDepthCeiling]. Generated readers count the structs around a
	// value, not the containers of their own IDL types (their number is
	// fixed by the IDL, and reading them recurses no deeper): a value
	// inside a list of structs may nest one level further than Skip lets
	// it from the message's start.
	MaxDepth int
}

// Default limits.
const (
	DefaultMaxStringSize    = 16 << 20
	DefaultMaxContainerSize = 16 << 20
	DefaultMaxDepth         = 64
)

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxStringSize:    DefaultMaxStringSize,
		MaxContainerSize: DefaultMaxContainerSize,
		MaxDepth:         DefaultMaxDepth,
	}
}

// MaxDepthCeiling is the largest MaxDepth Validate accepts, and the bound
// Skip puts on its maxDepth argument. Readers recurse once per level: a
// message nesting millions of one-byte levels would grow a goroutine's stack
// to Go's 1 GB ceiling, where the runtime aborts the whole process.
const MaxDepthCeiling = 10000

// maxWireSize is the largest size either protocol can declare (int32).
const maxWireSize = 1<<31 - 1

// Validate reports whether l is usable: no field negative, the sizes not
// above the largest size the wire can declare (2^31-1), MaxDepth not above
// MaxDepthCeiling. Zero fields are allowed and mean the default.
func (l Limits) Validate() error {
	check := func(name string, v, max int) error {
		if v < 0 || v > max {
			return fmt.Errorf("thrift: Limits.%s = %d, want 0 (default) to %d", name, v, max)
		}
		return nil
	}
	if err := check("MaxStringSize", l.MaxStringSize, maxWireSize); err != nil {
		return err
	}
	if err := check("MaxContainerSize", l.MaxContainerSize, maxWireSize); err != nil {
		return err
	}
	return check("MaxDepth", l.MaxDepth, MaxDepthCeiling)
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxStringSize == 0 {
		l.MaxStringSize = d.MaxStringSize
	}
	if l.MaxContainerSize == 0 {
		l.MaxContainerSize = d.MaxContainerSize
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	return l
}

// The limits in force. Each is an atomic so readers on any goroutine may load
// them while SetLimits runs; a reader may see a mix of old and new fields
// during the change, which is harmless (each field is checked on its own).
var (
	maxStringSize    atomic.Int64 // guarded by atomic access
	maxContainerSize atomic.Int64 // guarded by atomic access
	maxDepth         atomic.Int64 // guarded by atomic access
)

func init() {
	storeLimits(DefaultLimits())
}

func storeLimits(l Limits) {
	maxStringSize.Store(int64(l.MaxStringSize))
	maxContainerSize.Store(int64(l.MaxContainerSize))
	maxDepth.Store(int64(l.MaxDepth))
}

// SetLimits replaces the process-wide limits every reader of this package
// checks. Zero fields mean the default. It returns the Validate error, if any,
// and changes nothing in that case.
func SetLimits(l Limits) error {
	if err := l.Validate(); err != nil {
		return err
	}
	storeLimits(l.withDefaults())
	return nil
}

// CurrentLimits returns the limits in force.
func CurrentLimits() Limits {
	return Limits{
		MaxStringSize:    int(maxStringSize.Load()),
		MaxContainerSize: int(maxContainerSize.Load()),
		MaxDepth:         int(maxDepth.Load()),
	}
}

// depthOrDefault is the depth limit of a Skip given maxDepth d: the
// configured one for 0 or less, never more than MaxDepthCeiling.
func depthOrDefault(d int) int {
	if d <= 0 {
		return int(maxDepth.Load())
	}
	return min(d, MaxDepthCeiling)
}
