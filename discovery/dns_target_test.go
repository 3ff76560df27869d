package discovery_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/discovery"
)

// TestDNSTargetWithoutPortNumber checks that a target with a colon but no
// port ("host:") is refused with an error naming it, instead of resolving
// to addresses with an empty port that every dial then fails on.
func TestDNSTargetWithoutPortNumber(t *testing.T) {
	f := newFake()
	f.set("svc.local", "10.0.0.1")
	d, err := discovery.NewDNS(discovery.DNSConfig{
		Targets:    map[string]string{"Echo": "svc.local:"},
		LookupHost: f.lookupHost,
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := d.Resolve(context.Background(), "Echo")
	if err == nil {
		t.Fatalf("target %q resolved to %v; want an error saying it has no port", "svc.local:", addrs(list))
	}
	if msg := err.Error(); !strings.Contains(msg, `svc.local:`) || !strings.Contains(msg, "port") {
		t.Fatalf("error %q does not name the target and its missing port", msg)
	}
}
