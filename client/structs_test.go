package client_test

import (
	"github.com/petrel-rpc/petrel/codec/thrift"
)

// The test service "Echo" has one method, "echo", whose argument struct says
// how the test server must answer (see the mode constants). The structs are
// written by hand in the shape the generator gives them. Strings are kept in
// reused byte slices so that decoding allocates nothing once warm: the
// benchmarks then count only the client's own allocations.

// How the test server answers a call of "echo".
const (
	modeEcho      int32 = iota // reply with Msg
	modeAppError               // TApplicationException INTERNAL_ERROR
	modeBiz                    // business status 1001 in TTHeader, normal reply
	modeDeclared               // the declared exception Oops (result field 1)
	modeDrop                   // normal reply carrying the drop-connection flag
	modeReset                  // reset the connection (RST), no reply
	modeClose                  // close the connection gracefully, no reply
	modeHuge                   // reply with a Msg of Size bytes
	modeWrongSeq               // reply with Msg under another sequence id
	modeWrongName              // reply with Msg under the method name "other"
	modeCallType               // answer with a message of type CALL, not REPLY
)

// echoArgs is <Echo><echo>Args: 1: binary msg, 2: i32 mode, 3: i32 sleepMs,
// 4: i32 size.
type echoArgs struct {
	Msg     []byte
	Mode    int32
	SleepMs int32
	Size    int32
}

func (a *echoArgs) BLength() int {
	return thrift.FieldBeginLength + thrift.Binary.BinaryLength(a.Msg) +
		3*(thrift.FieldBeginLength+thrift.I32Length) + thrift.FieldStopLength
}

func (a *echoArgs) FastWrite(b []byte) int {
	n := thrift.Binary.WriteFieldBegin(b, thrift.STRING, 1)
	n += thrift.Binary.WriteBinary(b[n:], a.Msg)
	n += thrift.Binary.WriteFieldBegin(b[n:], thrift.I32, 2)
	n += thrift.Binary.WriteI32(b[n:], a.Mode)
	n += thrift.Binary.WriteFieldBegin(b[n:], thrift.I32, 3)
	n += thrift.Binary.WriteI32(b[n:], a.SleepMs)
	n += thrift.Binary.WriteFieldBegin(b[n:], thrift.I32, 4)
	n += thrift.Binary.WriteI32(b[n:], a.Size)
	return n + thrift.Binary.WriteFieldStop(b[n:])
}

func (a *echoArgs) FastRead(b []byte) (int, error) {
	*a = echoArgs{Msg: a.Msg[:0]}
	n := 0
	for {
		t, id, m, err := thrift.Binary.ReadFieldBegin(b[n:])
		if err != nil {
			return 0, err
		}
		n += m
		if t == thrift.STOP {
			return n, nil
		}
		switch {
		case id == 1 && t == thrift.STRING:
			var v []byte
			v, m, err = thrift.Binary.ReadBinaryNocopy(b[n:])
			a.Msg = append(a.Msg, v...)
		case id == 2 && t == thrift.I32:
			a.Mode, m, err = thrift.Binary.ReadI32(b[n:])
		case id == 3 && t == thrift.I32:
			a.SleepMs, m, err = thrift.Binary.ReadI32(b[n:])
		case id == 4 && t == thrift.I32:
			a.Size, m, err = thrift.Binary.ReadI32(b[n:])
		default:
			m, err = thrift.Binary.SkipDepth(b[n:], t, 1)
		}
		if err != nil {
			return 0, err
		}
		n += m
	}
}

// oops is the exception the IDL declares for "echo" (field 1 of the result).
type oops struct {
	Why string
}

func (e *oops) Error() string { return "oops: " + e.Why }

func (e *oops) BLength() int {
	return thrift.FieldBeginLength + thrift.Binary.StringLength(e.Why) + thrift.FieldStopLength
}

func (e *oops) FastWrite(b []byte) int {
	n := thrift.Binary.WriteFieldBegin(b, thrift.STRING, 1)
	n += thrift.Binary.WriteString(b[n:], e.Why)
	return n + thrift.Binary.WriteFieldStop(b[n:])
}

func (e *oops) FastRead(b []byte) (int, error) {
	n := 0
	for {
		t, id, m, err := thrift.Binary.ReadFieldBegin(b[n:])
		if err != nil {
			return 0, err
		}
		n += m
		if t == thrift.STOP {
			return n, nil
		}
		if id == 1 && t == thrift.STRING {
			e.Why, m, err = thrift.Binary.ReadString(b[n:])
		} else {
			m, err = thrift.Binary.SkipDepth(b[n:], t, 1)
		}
		if err != nil {
			return 0, err
		}
		n += m
	}
}

// echoResult is <Echo><echo>Result: 0: binary success, 1: Oops err.
type echoResult struct {
	Success    []byte
	HasSuccess bool
	Err        *oops
}

// GetError returns the declared exception, as generated results do.
func (r *echoResult) GetError() error {
	if r.Err != nil {
		return r.Err
	}
	return nil
}

func (r *echoResult) BLength() int {
	n := thrift.FieldStopLength
	if r.HasSuccess {
		n += thrift.FieldBeginLength + thrift.Binary.BinaryLength(r.Success)
	}
	if r.Err != nil {
		n += thrift.FieldBeginLength + r.Err.BLength()
	}
	return n
}

func (r *echoResult) FastWrite(b []byte) int {
	n := 0
	if r.HasSuccess {
		n += thrift.Binary.WriteFieldBegin(b[n:], thrift.STRING, 0)
		n += thrift.Binary.WriteBinary(b[n:], r.Success)
	}
	if r.Err != nil {
		n += thrift.Binary.WriteFieldBegin(b[n:], thrift.STRUCT, 1)
		n += r.Err.FastWrite(b[n:])
	}
	return n + thrift.Binary.WriteFieldStop(b[n:])
}

func (r *echoResult) FastRead(b []byte) (int, error) {
	r.Success, r.HasSuccess, r.Err = r.Success[:0], false, nil
	n := 0
	for {
		t, id, m, err := thrift.Binary.ReadFieldBegin(b[n:])
		if err != nil {
			return 0, err
		}
		n += m
		if t == thrift.STOP {
			return n, nil
		}
		switch {
		case id == 0 && t == thrift.STRING:
			var v []byte
			v, m, err = thrift.Binary.ReadBinaryNocopy(b[n:])
			r.Success, r.HasSuccess = append(r.Success, v...), true
		case id == 1 && t == thrift.STRUCT:
			r.Err = new(oops)
			m, err = r.Err.FastRead(b[n:])
		default:
			m, err = thrift.Binary.SkipDepth(b[n:], t, 1)
		}
		if err != nil {
			return 0, err
		}
		n += m
	}
}
