package discovery_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
)

// TestStaticZeroValue: a Static declared without NewStatic (var s
// discovery.Static) starts with no instance, and Set gives its watchers the
// new list rather than panicking on the change channel it never made.
func TestStaticZeroValue(t *testing.T) {
	var s discovery.Static
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if list, err := s.Resolve(ctx, "svc"); err != nil || len(list) != 0 {
		t.Fatalf("Resolve on a zero Static = %v, %v; want no instance", list, err)
	}
	w, err := s.Watch(ctx, "svc")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if list, err := w.Next(ctx); err != nil || len(list) != 0 {
		t.Fatalf("first Next on a zero Static = %v, %v; want no instance", list, err)
	}
	got := make(chan []discovery.Instance, 1)
	errc := make(chan error, 1)
	go func() {
		list, err := w.Next(ctx)
		got <- list
		errc <- err
	}()
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Set on a zero Static panicked: %v", p)
			}
		}()
		s.Set(discovery.Instance{Address: "a:1"})
	}()
	list := <-got
	if err := <-errc; err != nil || len(list) != 1 || list[0].Address != "a:1" {
		t.Fatalf("Next after Set on a zero Static = %v, %v; want [a:1]", list, err)
	}
}
