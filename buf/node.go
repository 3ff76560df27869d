package buf

import "sync/atomic"

// node is one link of a LinkBuffer. Its readable bytes are buf[off:end].
//
// Ownership of the fields: off is the reader's; w, readonly and the choice of
// the next node are the writer's; end and next are published by the writer
// (atomically) and loaded by the reader. refs counts the lists and views that
// still use mem.
type node struct {
	buf []byte // the memory this node covers
	mem []byte // the block this node owns (nil for views and lent memory)

	off int          // reader: first unread byte of buf
	w   int          // writer: bytes of buf written, published or not
	end atomic.Int64 // writer publishes here how many bytes of buf are readable

	next  atomic.Pointer[node]
	refs  atomic.Int32 // references to mem (owning nodes only)
	owner *node        // for a view of pooled memory: the node that owns it

	class    int8 // size class of mem, -1 when not pooled
	readonly bool // writer: buf must not be written (lent, shared or sealed)

	heldNext *node // reader: chain of blocks held for spanning reads
}

// root is the node whose reference keeps n's memory alive (nil for lent memory).
func (n *node) root() *node {
	if n.owner != nil {
		return n.owner
	}
	if n.mem != nil {
		return n
	}
	return nil
}
