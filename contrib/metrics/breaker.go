package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/circuitbreak"
)

// WatchBreaker exports the state and counters of circuit breaker b under
// the label breaker=name, read at each scrape:
//
//	petrel_breaker_state{breaker, state}   1 for b's current state, 0 for the others
//	petrel_breaker_calls_total{breaker, outcome}   outcome: allowed, rejected, probe
//	petrel_breaker_opened_total{breaker}
//
// (circuitbreak.Group does not list its keys, so a group's breakers are
// watched one by one, for example per method with Group.Get(method).) It
// fails when a breaker of the same name is already watched.
func (m *Metrics) WatchBreaker(name string, b *circuitbreak.Breaker) error {
	labels := prometheus.Labels{"breaker": name}
	return m.reg.Register(&breakerCollector{b: b,
		state: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "breaker", "state"),
			"Circuit breaker state: 1 for the current one.", []string{"state"}, labels),
		calls: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "breaker", "calls_total"),
			"Calls seen by the circuit breaker, by outcome.", []string{"outcome"}, labels),
		opened: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "breaker", "opened_total"),
			"Times the circuit breaker opened.", nil, labels),
	})
}

type breakerCollector struct {
	b                    *circuitbreak.Breaker
	state, calls, opened *prometheus.Desc
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	ch <- c.calls
	ch <- c.opened
}

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	send := func(d *prometheus.Desc, t prometheus.ValueType, v int64, labels ...string) {
		if m, err := prometheus.NewConstMetric(d, t, float64(v), labels...); err == nil {
			ch <- m
		}
	}
	cur := c.b.State()
	for _, s := range []circuitbreak.State{circuitbreak.Closed, circuitbreak.Open, circuitbreak.HalfOpen} {
		v := int64(0)
		if s == cur {
			v = 1
		}
		send(c.state, prometheus.GaugeValue, v, s.String())
	}
	st := c.b.Stats()
	send(c.calls, prometheus.CounterValue, st.Allowed, "allowed")
	send(c.calls, prometheus.CounterValue, st.Rejected, "rejected")
	send(c.calls, prometheus.CounterValue, st.Probes, "probe")
	send(c.opened, prometheus.CounterValue, st.Opened)
}
