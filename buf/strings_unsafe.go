package buf

import "unsafe"

// stringBytes returns the bytes of s without copying them. It is safe because
// the buffer links them into a node marked readonly: nothing ever writes
// through the returned slice, and the node keeps s reachable while it is used.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
