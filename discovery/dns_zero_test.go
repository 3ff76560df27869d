package discovery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
)

// TestDNSZeroValue: a DNS made without NewDNS (new(discovery.DNS)) has the
// defaults of DNSConfig: it looks names up with the net package's resolver
// rather than calling a nil function, and its watcher waits
// DefaultDNSRefresh between lookups rather than looking its name up
// without pause.
func TestDNSZeroValue(t *testing.T) {
	d := new(discovery.DNS)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Resolve on a zero DNS panicked: %v", r)
			}
		}()
		list, err := d.Resolve(ctx, "localhost:8888")
		if err != nil || len(list) == 0 {
			t.Fatalf("Resolve(localhost:8888) on a zero DNS = %v, %v", list, err)
		}
	}()
	if r := discovery.Refresh(d); r != discovery.DefaultDNSRefresh {
		t.Fatalf("a zero DNS refreshes every %v; want DefaultDNSRefresh (%v)", r, discovery.DefaultDNSRefresh)
	}
	w, err := d.Watch(ctx, "localhost:8888")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Next(ctx); err != nil {
		t.Fatal(err)
	}
	// The list does not change: the second Next waits for the next
	// refresh, which is far beyond this context.
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	start := time.Now()
	_, err = w.Next(short)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Next on a zero DNS = %v after %v; want it to wait out the context", err, time.Since(start))
	}
}
