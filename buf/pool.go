package buf

import (
	"math/bits"
	"sync"
)

// Node memory comes from one sync.Pool per power-of-two size class. A pooled
// value is a *node with its memory attached, so Get and Put never allocate.
// Blocks above maxClass are allocated for the request and left to the garbage
// collector, so a multi-gigabyte message never stays pinned in a pool.
const (
	minClass = 10 // 1 KiB, the smallest block
	maxClass = 26 // 64 MiB, the largest pooled block
)

var (
	classPools [maxClass + 1]sync.Pool
	// viewPool holds nodes without memory of their own (views and lent slices).
	viewPool = sync.Pool{New: func() any { return new(node) }}
)

// sizeClass returns the class whose blocks hold n bytes.
func sizeClass(n int) int {
	if n <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(n - 1))
}

// newNode returns an owning node with at least size bytes of memory.
func newNode(size int) *node {
	c := sizeClass(size)
	var n *node
	if c <= maxClass {
		if v := classPools[c].Get(); v != nil {
			n = v.(*node)
		} else {
			n = &node{mem: make([]byte, 1<<c)}
		}
		n.class = int8(c)
	} else {
		n = &node{mem: make([]byte, size), class: -1}
	}
	n.buf = n.mem
	n.refs.Store(1)
	return n
}

// newView returns a node that views memory it does not own: a slice of owner's
// memory (owner != nil, which gains a reference) or memory lent by the caller
// (owner == nil).
func newView(b []byte, owner *node) *node {
	n := viewPool.Get().(*node)
	n.buf = b
	n.owner = owner
	n.class = -1
	if owner != nil {
		owner.refs.Add(1)
	}
	return n
}

// free drops the list's reference to n. Memory goes back to its pool when its
// last reference is gone.
func (n *node) free() {
	owner := n.owner
	if owner != nil || n.mem == nil { // a view: recycle the header now
		n.reset()
		viewPool.Put(n)
		if owner != nil {
			owner.unref()
		}
		return
	}
	n.unref()
}

func (n *node) unref() {
	if n.refs.Add(-1) != 0 {
		return
	}
	c := n.class
	mem := n.mem
	n.reset()
	if c >= minClass {
		n.mem = mem
		n.class = c
		classPools[c].Put(n)
	}
}

// reset clears n for reuse. Nothing else refers to n any more, so the whole
// struct is overwritten at once instead of through atomic stores.
func (n *node) reset() {
	*n = node{}
}
