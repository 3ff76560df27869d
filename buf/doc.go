// Package buf provides LinkBuffer, a linked, pooled byte buffer with a nocopy
// Reader and a nocopy Writer, on which Petrel's connections and codecs are built.
//
// A LinkBuffer is a singly linked list of nodes. Each node views a block of memory
// taken from size-classed pools (1 KiB to 64 MiB; larger blocks are allocated and
// left to the garbage collector), or views memory the caller lent it
// ([LinkBuffer.WriteBinary] of [NocopyThreshold] bytes or more links the caller's slice by
// reference instead of copying it).
//
// Writing and reading are separate sides. Bytes written through the Writer
// methods stay invisible to the Reader until [LinkBuffer.Flush] publishes them.
// One goroutine may write while another reads (a single producer and a single
// consumer, as a connection's poller and its handler do); the Reader methods must
// not be called from two goroutines at once, nor the Writer methods.
//
// Slices returned by [LinkBuffer.Next], [LinkBuffer.Peek] and [LinkBuffer.Until]
// point into the buffer's memory and stay valid until [LinkBuffer.Release]; copy
// what must outlive it ([LinkBuffer.ReadBinary] and [LinkBuffer.ReadString] copy).
// They are read-only: they may be memory the writer lent (a [LinkBuffer.WriteString]
// string, a [LinkBuffer.WriteBinary] slice), which writing through them would
// change, or fault on for a string constant. For the same reason lent memory
// must not change until the reader has released it or it has been written out.
// [LinkBuffer.Slice] hands out a zero-copy sub-reader that holds references to the
// memory it covers until its own Release.
package buf
