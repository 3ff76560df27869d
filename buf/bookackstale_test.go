package buf_test

import (
	"bytes"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
)

// TestBookAckWithoutBook: BookAck's doc says a
// count "above the room the last Book handed out, is an error and records
// nothing", and TestBookAckOutsideTheBooking says "an ack with nothing booked
// must not publish bytes nobody wrote (stale memory of a pooled block)". That
// held only on an empty buffer: once the last node had free room, BookAck
// with no Book before it (or a second BookAck for one Book) was accepted and
// published whatever the pooled block held, here another buffer's secret.
func TestBookAckWithoutBook(t *testing.T) {
	secret := bytes.Repeat([]byte("SECRET!"), 585) // 4095 bytes
	a := buf.NewLinkBuffer()
	p, _ := a.Malloc(len(secret))
	copy(p, secret)
	a.Flush()
	a.Reset() // its 4 KiB block goes back to the pool, secret and all

	b := buf.NewLinkBuffer()
	defer b.Reset()
	b.WriteString("abc") // takes a 4 KiB block (likely a's), 4093 bytes of room left
	b.Flush()
	b.Next(3)
	err := b.BookAck(100) // no Book at all
	b.Flush()
	if err == nil || b.Len() != 0 {
		got, _ := b.Peek(b.Len())
		t.Fatalf("BookAck(100) with nothing booked = %v; %d bytes published that nobody wrote: %q...",
			err, b.Len(), got[:min(len(got), 28)])
	}
}

// TestBookAckTwice: one Book, two BookAcks: the second one recorded the
// same room again (bytes nobody wrote) instead of being refused.
func TestBookAckTwice(t *testing.T) {
	b := buf.NewLinkBuffer()
	defer b.Reset()
	b.WriteString("abc")
	iov := b.Book(1, nil)
	copy(iov[0], "0123456789")
	if err := b.BookAck(10); err != nil {
		t.Fatal(err)
	}
	err := b.BookAck(10) // nothing new was booked or written
	b.Flush()
	if err == nil || b.Len() != 13 {
		t.Fatalf("second BookAck(10) for one Book = %v; Len %d, want an error and 13", err, b.Len())
	}
}
