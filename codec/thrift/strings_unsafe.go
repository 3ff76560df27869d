package thrift

import "unsafe"

// bytesString returns a string that shares b's memory.
//
// Why this is safe: the string header points into b's backing array, which
// the garbage collector keeps alive as long as the string is reachable. Go
// strings must never change; the only callers are the *Nocopy readers, whose
// documented contract is that the caller keeps the input unchanged while the
// result is in use. An empty b yields "" without touching b's pointer.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// stringBytes returns a byte slice that shares s's memory, to pass a string
// to [NocopyWriter.WriteDirect] without copying it.
//
// Why this is safe: the slice points at s's bytes, which stay alive while the
// slice is reachable. Writing through it would break Go's string immutability,
// so it is only ever given to WriteDirect, whose contract forbids modifying p.
// An empty s yields nil.
func stringBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
