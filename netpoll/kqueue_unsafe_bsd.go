//go:build darwin || freebsd

package netpoll

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// setUdata stores the operator pointer in the event's user data. Safe for the
// same reason as on Linux: the poller's registry keeps every operator the
// kernel knows reachable until after the batch in which it was deleted, and
// heap objects do not move.
func setUdata(ev *unix.Kevent_t, op *fdOperator) {
	ev.Udata = (*byte)(unsafe.Pointer(op))
}

func udata(ev *unix.Kevent_t) *fdOperator {
	return (*fdOperator)(unsafe.Pointer(ev.Udata))
}
