package transport

import "unsafe"

// unsafeString returns a string that shares b's memory, without copying.
//
// Why it is safe: every caller passes either memory that nothing writes to
// again (a private copy of a TTHeader header made for its strings, which only
// the returned strings reference), or a frame view whose documented lifetime
// ends at the reader's Release (the method name of ReadMessage). The bytes
// are never modified while such a string is reachable through documented use.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
