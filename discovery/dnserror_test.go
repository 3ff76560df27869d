package discovery_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/discovery"
)

// TestDNSErrorQuotesNames: an empty target or service name still shows in
// the error (as ""), so the message never reads "looking up  for service :".
func TestDNSErrorQuotesNames(t *testing.T) {
	err := (&discovery.DNSError{Target: "", Service: "", Err: errors.New("missing port in address")}).Error()
	if want := `looking up "" for service "": missing port in address`; !strings.Contains(err, want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
}
