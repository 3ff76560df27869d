package buf_test

import (
	"testing"

	"github.com/petrel-rpc/petrel/buf"
)

// TestBookAckOutsideTheBooking: a count above the booked room (a reader that
// claims more than it was given) or an ack with nothing booked must not
// publish bytes nobody wrote (stale memory of a pooled block, or an end past
// the block that makes a later Next panic), nor panic.
func TestBookAckOutsideTheBooking(t *testing.T) {
	for _, lead := range []int{0, 10} {
		b := buf.NewLinkBuffer()
		if lead > 0 {
			b.WriteString("0123456789")
			b.Flush()
		}
		room := 0
		for _, s := range b.Book(1, nil) {
			room += len(s)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("lead %d: BookAck(%d) of %d booked bytes panicked: %v", lead, room+100, room, r)
				}
			}()
			if err := b.BookAck(room + 100); err == nil {
				t.Fatalf("lead %d: BookAck(%d) of %d booked bytes: no error", lead, room+100, room)
			}
			b.Flush()
		}()
		if b.Len() != lead {
			t.Fatalf("lead %d: BookAck(%d) of %d booked bytes made %d bytes readable; want %d", lead, room+100, room, b.Len(), lead)
		}
		// A count within the booking still works after the refused one.
		if err := b.BookAck(room); err != nil {
			t.Fatalf("lead %d: BookAck(%d) of %d booked bytes: %v", lead, room, room, err)
		}
		b.Flush()
		if b.Len() != lead+room {
			t.Fatalf("lead %d: Len %d after BookAck(%d); want %d", lead, b.Len(), room, lead+room)
		}
		b.Reset()
	}
	b := buf.NewLinkBuffer()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("BookAck(10) without a Book panicked: %v", r)
			}
		}()
		if err := b.BookAck(10); err == nil {
			t.Fatal("BookAck(10) without a Book: no error")
		}
		if err := b.BookAck(-1); err == nil {
			t.Fatal("BookAck(-1): no error")
		}
		b.Flush()
	}()
	if b.Len() != 0 {
		t.Fatalf("BookAck(10) without a Book made %d bytes readable", b.Len())
	}
	b.Reset()
}
