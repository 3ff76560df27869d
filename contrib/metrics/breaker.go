package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/circuitbreak"
)

// WatchBreaker exports the state and counters of circuit breaker b under
// the labels breaker=name, key="", read at each scrape:
//
//	petrel_breaker_state{breaker, key, state}   1 for b's current state, 0 for the others
//	petrel_breaker_calls_total{breaker, key, outcome}   outcome: allowed, rejected, probe
//	petrel_breaker_opened_total{breaker, key}
//
// It fails when a breaker or group of the same name is already watched, or
// b is nil.
func (m *Metrics) WatchBreaker(name string, b *circuitbreak.Breaker) error {
	if b == nil {
		return fmt.Errorf("metrics: WatchBreaker(%q): the breaker is nil", name)
	}
	return m.register("WatchBreaker", name, m.breakerCollector(name, func(fn func(string, *circuitbreak.Breaker) bool) { fn("", b) }))
}

// WatchBreakerGroup exports every breaker of g, as WatchBreaker does, with
// key the breaker's key: the method for a service-level group
// (client.WithCircuitBreaker), the instance address for an instance-level
// one (client.WithInstanceBreaker). The keys are listed at each scrape, so
// an instance that left (its breaker removed from g) leaves the metrics
// with it. It fails when a breaker or group of the same name is already
// watched, or g is nil.
func (m *Metrics) WatchBreakerGroup(name string, g *circuitbreak.Group) error {
	if g == nil {
		return fmt.Errorf("metrics: WatchBreakerGroup(%q): the group is nil", name)
	}
	return m.register("WatchBreakerGroup", name, m.breakerCollector(name, g.Range))
}

// BreakerTransitions returns a circuitbreak.Config.OnStateChange hook that
// counts each state change of the breakers configured with it in
// petrel_breaker_transitions_total{breaker=name, from, to}. The key (an
// instance address, a method) is not a label, so instance churn does not
// grow the series: WatchBreakerGroup shows each key's current state. A
// name that is not valid UTF-8 has its bad bytes replaced by U+FFFD.
func (m *Metrics) BreakerTransitions(name string) func(key string, from, to circuitbreak.State) {
	name = labelValue(name)
	return func(_ string, from, to circuitbreak.State) {
		m.moves.WithLabelValues(name, from.String(), to.String()).Inc()
	}
}

func (m *Metrics) breakerCollector(name string, each func(func(string, *circuitbreak.Breaker) bool)) *breakerCollector {
	labels := prometheus.Labels{"breaker": name}
	return &breakerCollector{each: each,
		state: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "breaker", "state"),
			"Circuit breaker state: 1 for the current one.", []string{"key", "state"}, labels),
		calls: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "breaker", "calls_total"),
			"Calls seen by the circuit breaker, by outcome.", []string{"key", "outcome"}, labels),
		opened: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "breaker", "opened_total"),
			"Times the circuit breaker opened.", []string{"key"}, labels),
	}
}

type breakerCollector struct {
	each                 func(func(key string, b *circuitbreak.Breaker) bool)
	state, calls, opened *prometheus.Desc
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	ch <- c.calls
	ch <- c.opened
}

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	c.each(func(key string, b *circuitbreak.Breaker) bool {
		cur := b.State()
		for _, s := range []circuitbreak.State{circuitbreak.Closed, circuitbreak.Open, circuitbreak.HalfOpen} {
			v := int64(0)
			if s == cur {
				v = 1
			}
			sendConst(ch, c.state, prometheus.GaugeValue, v, key, s.String())
		}
		st := b.Stats()
		sendConst(ch, c.calls, prometheus.CounterValue, st.Allowed, key, "allowed")
		sendConst(ch, c.calls, prometheus.CounterValue, st.Rejected, key, "rejected")
		sendConst(ch, c.calls, prometheus.CounterValue, st.Probes, key, "probe")
		sendConst(ch, c.opened, prometheus.CounterValue, st.Opened, key)
		return true
	})
}
