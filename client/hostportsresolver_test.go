package client_test

import (
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/discovery"
)

// TestNewRejectsHostPortsWithResolver: WithHostPorts and WithResolver both
// say where the calls go. New accepted the two together (and checked the
// host ports), then sent every call to the resolver's instances, whatever
// the order of the options: the addresses given were silently unused. New
// must refuse the combination, naming both options.
func TestNewRejectsHostPortsWithResolver(t *testing.T) {
	a, b := "127.0.0.1:1", "127.0.0.1:2"
	for _, opts := range [][]client.Option{
		{client.WithResolver(discovery.NewStaticAddrs(b)), client.WithHostPorts(a)},
		{client.WithHostPorts(a), client.WithResolver(discovery.NewStaticAddrs(b))},
	} {
		c, err := client.New("Echo", opts...)
		if err == nil {
			c.Close()
			t.Fatal("New accepted WithHostPorts with WithResolver; the host ports would be unused")
		}
		if msg := err.Error(); !strings.Contains(msg, "WithHostPorts") || !strings.Contains(msg, "WithResolver") {
			t.Fatalf("New's error %q does not name WithHostPorts and WithResolver", msg)
		}
	}
}
