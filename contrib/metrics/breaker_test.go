package metrics_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/contrib/metrics"
	"github.com/petrel-rpc/petrel/rpcerr"
)

func TestWatchBreaker(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	b, err := circuitbreak.New(circuitbreak.Config{MinSamples: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WatchBreaker("hello.echo", b); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchBreaker("hello.echo", b); err == nil {
		t.Fatal("the same breaker name registered twice")
	}
	want := func(state string, allowed, rejected, opened int) string {
		var sb strings.Builder
		sb.WriteString("# HELP petrel_breaker_calls_total Calls seen by the circuit breaker, by outcome.\n# TYPE petrel_breaker_calls_total counter\n")
		for _, o := range []struct {
			name string
			n    int
		}{{"allowed", allowed}, {"probe", 0}, {"rejected", rejected}} {
			sb.WriteString(`petrel_breaker_calls_total{breaker="hello.echo",outcome="` + o.name + `"} ` + strconv.Itoa(o.n) + "\n")
		}
		sb.WriteString("# HELP petrel_breaker_opened_total Times the circuit breaker opened.\n# TYPE petrel_breaker_opened_total counter\n")
		sb.WriteString(`petrel_breaker_opened_total{breaker="hello.echo"} ` + strconv.Itoa(opened) + "\n")
		sb.WriteString("# HELP petrel_breaker_state Circuit breaker state: 1 for the current one.\n# TYPE petrel_breaker_state gauge\n")
		for _, s := range []string{"closed", "half-open", "open"} {
			v := 0
			if s == state {
				v = 1
			}
			sb.WriteString(`petrel_breaker_state{breaker="hello.echo",state="` + s + `"} ` + strconv.Itoa(v) + "\n")
		}
		return sb.String()
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("closed", 0, 0, 0)), "petrel_breaker_state", "petrel_breaker_calls_total", "petrel_breaker_opened_total"); err != nil {
		t.Fatal(err)
	}
	fail := rpcerr.New(rpcerr.Connection, "down")
	for i := 0; i < 4; i++ {
		probe, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		b.Done(probe, fail)
	}
	if _, err := b.Allow(); !errors.Is(err, circuitbreak.ErrOpen) {
		t.Fatalf("breaker not open after 4 failures: %v", err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("open", 4, 1, 1)), "petrel_breaker_state", "petrel_breaker_calls_total", "petrel_breaker_opened_total"); err != nil {
		t.Fatal(err)
	}
}
