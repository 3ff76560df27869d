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

// TestDNSTargetPortOutOfRange checks that a target whose port is a number
// outside 1-65535 is refused with an error naming the target and its port,
// instead of resolving to addresses that every dial then fails on. A port
// given by name ("http") is left to the dial, which looks it up.
func TestDNSTargetPortOutOfRange(t *testing.T) {
	f := newFake()
	f.set("svc.local", "10.0.0.1")
	d, err := discovery.NewDNS(discovery.DNSConfig{LookupHost: f.lookupHost})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"svc.local:0", "svc.local:65536", "svc.local:99999", "svc.local:-1", "svc.local:99999999999999999999999"} {
		list, err := d.Resolve(context.Background(), target)
		if err == nil {
			t.Errorf("target %q resolved to %v; want an error saying its port is out of range", target, addrs(list))
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, target) || !strings.Contains(msg, "port") {
			t.Errorf("error %q does not name the target %q and its port", msg, target)
		}
	}
	for _, target := range []string{"svc.local:1", "svc.local:65535", "svc.local:http"} {
		if list, err := d.Resolve(context.Background(), target); err != nil || len(list) != 1 {
			t.Errorf("target %q: %v, %v; want one instance", target, addrs(list), err)
		}
	}
}
