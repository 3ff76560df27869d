package handler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/examples/hello/handler"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestGreetLongNameStaysUTF8 checks that the name an over-long Greet sends
// back in InvalidName is cut between characters: a Thrift string is UTF-8,
// and clients in other languages fail or garble one that is not.
func TestGreetLongNameStaysUTF8(t *testing.T) {
	for _, name := range []string{
		strings.Repeat("x", handler.MaxNameLen+1),
		"a" + strings.Repeat("é", handler.MaxNameLen), // byte MaxNameLen is inside an é
		strings.Repeat("日", handler.MaxNameLen),
	} {
		_, err := new(handler.Handler).Greet(context.Background(), name)
		var invalid *hello.InvalidName
		if !errors.As(err, &invalid) {
			t.Fatalf("Greet of %d bytes: %v, want InvalidName", len(name), err)
		}
		cut, ok := strings.CutSuffix(invalid.Name, "...")
		if !ok || !utf8.ValidString(cut) || !strings.HasPrefix(name, cut) || len(cut) > handler.MaxNameLen || len(cut) < handler.MaxNameLen-utf8.UTFMax+1 {
			t.Errorf("Greet of %q: InvalidName.Name %q, want the name's first characters within %d bytes, then \"...\"", name, invalid.Name, handler.MaxNameLen)
		}
	}
}

// TestNotifyKeepsLatestEvents: Notify comes from the network, so a server
// keeps only the latest MaxEvents events, not every event ever sent, while
// WaitEvents still counts all of them.
func TestNotifyKeepsLatestEvents(t *testing.T) {
	h := new(handler.Handler)
	ctx := context.Background()
	const n = 10 * handler.MaxEvents
	for i := range n {
		if err := h.Notify(ctx, fmt.Sprint("event ", i)); err != nil {
			t.Fatal(err)
		}
	}
	ev := h.Events()
	if len(ev) != handler.MaxEvents || ev[0] != fmt.Sprint("event ", n-handler.MaxEvents) || ev[len(ev)-1] != fmt.Sprint("event ", n-1) {
		t.Fatalf("after %d Notify calls Events holds %d events (first %q), want the last %d", n, len(ev), ev[0], handler.MaxEvents)
	}
	dctx, cancel := context.WithCancel(ctx)
	cancel() // WaitEvents must not wait: n events were recorded
	if got, err := h.WaitEvents(dctx, n); err != nil || len(got) != handler.MaxEvents {
		t.Fatalf("WaitEvents(%d) after %d events: %d events, %v", n, n, len(got), err)
	}
}
