package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/client"
)

// PoolReporter is what WatchPool reads: a *client.Client satisfies it.
type PoolReporter interface {
	PoolStats() client.PoolStats
}

// WatchPool exports the connection pool sizes of a client (see
// client.PoolStats) under the label client=name, read at each scrape:
//
//	petrel_client_pool_connections{client, state}   state: open (idle and in use, or multiplexed), idle
//	petrel_client_pool_addresses{client}           server addresses the pool keeps connections for
//
// It fails when a client of the same name is already watched, or c is nil.
func (m *Metrics) WatchPool(name string, c PoolReporter) error {
	if cc, ok := c.(*client.Client); c == nil || ok && cc == nil {
		return fmt.Errorf("metrics: WatchPool(%q): the client is nil", name)
	}
	labels := prometheus.Labels{"client": name}
	return m.register("WatchPool", name, &poolCollector{c: c,
		conns: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "client", "pool_connections"),
			"Connections of the client's pool: open (idle, in use or multiplexed) and, of those, idle.", []string{"state"}, labels),
		addrs: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "client", "pool_addresses"),
			"Server addresses the client's pool keeps connections for.", nil, labels),
	})
}

type poolCollector struct {
	c            PoolReporter
	conns, addrs *prometheus.Desc
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.conns
	ch <- c.addrs
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.c.PoolStats()
	sendConst(ch, c.conns, prometheus.GaugeValue, int64(st.Open), "open")
	sendConst(ch, c.conns, prometheus.GaugeValue, int64(st.Idle), "idle")
	sendConst(ch, c.addrs, prometheus.GaugeValue, int64(st.Addresses))
}
