package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/metrics"
	"github.com/petrel-rpc/petrel/server"
)

// TestWatchNil: watching a nil server, pool, breaker or group is refused
// with an error naming the watch, and leaves the registry's scrapes
// working (a nil one accepted would fail every scrape of the registry).
func TestWatchNil(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	var c *client.Client
	for _, w := range []struct {
		what string
		err  error
	}{
		{"WatchServer", m.WatchServer("s", (*server.Server)(nil))},
		{"WatchPool", m.WatchPool("p", nil)},
		{"WatchPool", m.WatchPool("p2", c)},
		{"WatchBreaker", m.WatchBreaker("b", (*circuitbreak.Breaker)(nil))},
		{"WatchBreakerGroup", m.WatchBreakerGroup("g", nil)},
	} {
		if w.err == nil || !strings.Contains(w.err.Error(), w.what) || !strings.Contains(w.err.Error(), "nil") {
			t.Errorf("%s of nil: %v, want an error naming %s and nil", w.what, w.err, w.what)
		}
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("scrape after the nil watches: %v", err)
	}
}
