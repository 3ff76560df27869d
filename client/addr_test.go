package client_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/loadbalance"
)

// TestNewRejectsMalformedAddresses: a TCP address New cannot dial (no
// port, bad brackets, a port out of range) fails New with an error naming
// it, not every call with a Connection error that retries and breakers
// take for a server's failure.
func TestNewRejectsMalformedAddresses(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "localhost8080", "[::1", "[::1]", "a:b:c", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:0", "127.0.0.1:99999999999999999999"} {
		c, err := client.New("Echo", client.WithHostPorts("127.0.0.1:1", a))
		if err == nil {
			c.Close()
			t.Errorf("New accepted the address %q", a)
			continue
		}
		if !strings.Contains(err.Error(), a) {
			t.Errorf("New's error %q does not name the address %q", err, a)
		}
	}
	ok := [][]client.Option{
		{client.WithHostPorts("localhost:8080", "[::1]:80", ":9000", "example.com:http", "127.0.0.1:65535")},
		{client.WithHostPorts("/tmp/x.sock"), client.WithNetwork("unix")},
		{client.WithNetwork("unix"), client.WithHostPorts("relative.sock")},
	}
	for _, opts := range ok {
		c, err := client.New("Echo", opts...)
		if err != nil {
			t.Errorf("New refused good addresses: %v", err)
			continue
		}
		c.Close()
	}
}

// TestLoadBalancerKeepsHostPortCheck: New fails on a malformed
// WithHostPorts address with WithLoadBalancer (which balances over those
// addresses) as without it. With it, New skipped the check and returned a
// client whose every call then failed at dial time.
func TestLoadBalancerKeepsHostPortCheck(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000"} {
		c, err := client.New("svc", client.WithHostPorts(addr), client.WithLoadBalancer(loadbalance.NewWeightedRandom()))
		if err == nil {
			c.Close()
			t.Errorf("New with WithLoadBalancer accepted WithHostPorts(%q)", addr)
		}
		c, err = client.New("svc", client.WithHostPorts(addr))
		if err == nil {
			c.Close()
			t.Errorf("control: New accepted WithHostPorts(%q)", addr)
		}
	}
}
