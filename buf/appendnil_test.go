package buf_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
)

// TestAppendNil: appending a nil buffer (a nil *LinkBuffer or a nil Writer)
// is an error that says so, not a nil dereference, and leaves the buffer as
// it was.
func TestAppendNil(t *testing.T) {
	b := buf.NewLinkBuffer()
	defer b.Release()
	b.WriteString("abc")
	for _, w := range []buf.Writer{(*buf.LinkBuffer)(nil), nil} {
		err := b.Append(w)
		if err == nil || !strings.Contains(err.Error(), "nil") {
			t.Fatalf("Append(%#v) = %v, want an error saying the buffer is nil", w, err)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.ReadString(b.Len()); got != "abc" {
		t.Fatalf("after the refused Appends the buffer holds %q, want %q", got, "abc")
	}
}
