package metrics_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/metrics"
	"github.com/petrel-rpc/petrel/server"
)

// TestDuplicateSaysWhich: registering the same names twice (a second New on
// one registry, a second watch of one name) fails with an error that names
// the metric or the watch and its name, and still is a
// prometheus.AlreadyRegisteredError.
func TestDuplicateSaysWhich(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	_, err = metrics.New(metrics.Config{Registerer: reg})
	check := func(what string, err error, want ...string) {
		t.Helper()
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			t.Errorf("%s twice: %v, want an AlreadyRegisteredError", what, err)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s twice: %q does not say %q", what, err, w)
			}
		}
	}
	check("New", err, "petrel_requests_total", "Namespace")

	s := server.New()
	b, err := circuitbreak.New(circuitbreak.Config{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := circuitbreak.NewGroup(circuitbreak.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p := zeroPool{}
	for _, w := range []struct {
		what string
		do   func() error
	}{
		{"WatchServer", func() error { return m.WatchServer("srv", s) }},
		{"WatchPool", func() error { return m.WatchPool("cli", p) }},
		{"WatchBreaker", func() error { return m.WatchBreaker("brk", b) }},
		{"WatchBreakerGroup", func() error { return m.WatchBreakerGroup("grp", g) }},
	} {
		if err := w.do(); err != nil {
			t.Fatalf("first %s: %v", w.what, err)
		}
	}
	check("WatchServer", m.WatchServer("srv", s), "WatchServer", `"srv"`)
	check("WatchPool", m.WatchPool("cli", p), "WatchPool", `"cli"`)
	check("WatchBreaker", m.WatchBreaker("brk", b), "WatchBreaker", `"brk"`)
	check("WatchBreakerGroup", m.WatchBreakerGroup("brk", g), "WatchBreakerGroup", `"brk"`)
}

type zeroPool struct{}

func (zeroPool) PoolStats() client.PoolStats { return client.PoolStats{} }
