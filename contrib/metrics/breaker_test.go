package metrics_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/rpcerr"
)

func TestWatchBreaker(t *testing.T) {
	reg, m := newMetrics(t)
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
			sb.WriteString(`petrel_breaker_calls_total{breaker="hello.echo",key="",outcome="` + o.name + `"} ` + strconv.Itoa(o.n) + "\n")
		}
		sb.WriteString("# HELP petrel_breaker_opened_total Times the circuit breaker opened.\n# TYPE petrel_breaker_opened_total counter\n")
		sb.WriteString(`petrel_breaker_opened_total{breaker="hello.echo",key=""} ` + strconv.Itoa(opened) + "\n")
		sb.WriteString("# HELP petrel_breaker_state Circuit breaker state: 1 for the current one.\n# TYPE petrel_breaker_state gauge\n")
		for _, s := range []string{"closed", "half-open", "open"} {
			v := 0
			if s == state {
				v = 1
			}
			sb.WriteString(`petrel_breaker_state{breaker="hello.echo",key="",state="` + s + `"} ` + strconv.Itoa(v) + "\n")
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

// TestWatchBreakerGroup: every breaker of a group is exported under its key,
// with its own state; a removed key leaves the scrape.
func TestWatchBreakerGroup(t *testing.T) {
	reg, m := newMetrics(t)
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WatchBreakerGroup("hello.instances", g); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchBreaker("hello.instances", g.Get("x")); err == nil {
		t.Fatal("a breaker registered under a watched group's name")
	}
	g.Remove("x")
	up, down := g.Get("10.0.0.1:80"), g.Get("10.0.0.2:80")
	probe, _ := up.Allow()
	up.Done(probe, nil)
	probe, _ = down.Allow()
	down.Done(probe, rpcerr.New(rpcerr.Connection, "refused"))
	want := func(keys ...string) string {
		var sb strings.Builder
		sb.WriteString("# HELP petrel_breaker_state Circuit breaker state: 1 for the current one.\n# TYPE petrel_breaker_state gauge\n")
		for _, k := range keys {
			cur := "closed"
			if k == "10.0.0.2:80" {
				cur = "open"
			}
			for _, s := range []string{"closed", "half-open", "open"} {
				v := 0
				if s == cur {
					v = 1
				}
				sb.WriteString(`petrel_breaker_state{breaker="hello.instances",key="` + k + `",state="` + s + `"} ` + strconv.Itoa(v) + "\n")
			}
		}
		sb.WriteString("# HELP petrel_breaker_opened_total Times the circuit breaker opened.\n# TYPE petrel_breaker_opened_total counter\n")
		for _, k := range keys {
			n := "0"
			if k == "10.0.0.2:80" {
				n = "1"
			}
			sb.WriteString(`petrel_breaker_opened_total{breaker="hello.instances",key="` + k + `"} ` + n + "\n")
		}
		return sb.String()
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("10.0.0.1:80", "10.0.0.2:80")), "petrel_breaker_state", "petrel_breaker_opened_total"); err != nil {
		t.Fatal(err)
	}
	g.Remove("10.0.0.2:80") // the instance left
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want("10.0.0.1:80")), "petrel_breaker_state", "petrel_breaker_opened_total"); err != nil {
		t.Fatal(err)
	}
}

// TestBreakerTransitions: the OnStateChange hook counts each transition of a
// group's breakers by states, without a per-key series.
func TestBreakerTransitions(t *testing.T) {
	reg, m := newMetrics(t)
	g, err := circuitbreak.NewGroup(circuitbreak.Config{MinSamples: 1, OpenFor: time.Millisecond, HalfOpenSuccesses: 1,
		OnStateChange: m.BreakerTransitions("hello.instances")})
	if err != nil {
		t.Fatal(err)
	}
	fail := rpcerr.New(rpcerr.Connection, "refused")
	for _, key := range []string{"10.0.0.1:80", "10.0.0.2:80"} {
		b := g.Get(key)
		probe, _ := b.Allow()
		b.Done(probe, fail) // closed -> open
		time.Sleep(2 * time.Millisecond)
		probe, err := b.Allow() // open -> half-open
		if err != nil || !probe {
			t.Fatalf("%s: after OpenFor: probe %v, %v", key, probe, err)
		}
		b.Done(probe, nil) // half-open -> closed
	}
	want := `# HELP petrel_breaker_transitions_total Circuit breaker state changes, by breaker (or group) name and states.
# TYPE petrel_breaker_transitions_total counter
petrel_breaker_transitions_total{breaker="hello.instances",from="closed",to="open"} 2
petrel_breaker_transitions_total{breaker="hello.instances",from="half-open",to="closed"} 2
petrel_breaker_transitions_total{breaker="hello.instances",from="open",to="half-open"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "petrel_breaker_transitions_total"); err != nil {
		t.Fatal(err)
	}
}
