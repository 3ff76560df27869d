// Package metrics exports Petrel's RPC metrics to Prometheus
// (github.com/prometheus/client_golang).
//
// A [Metrics] registers its collectors on a prometheus.Registerer and hands
// out a stats.Tracer for clients ([Metrics.ClientTracer], passed to
// client.WithTracer) and one for servers ([Metrics.ServerTracer], passed to
// server.WithTracer). With the default namespace "petrel" it exports:
//
//	petrel_requests_total{side, service, method, code}            counter
//	petrel_request_duration_seconds{side, service, method}        histogram
//	petrel_in_flight_requests{side, service, method}              gauge
//	petrel_request_bytes_total{side, service, method}             counter
//	petrel_response_bytes_total{side, service, method}            counter
//
// side is "client" or "server", service the callee's service name, code
// the rpcerr code of the outcome ("ok", "timeout", "overloaded", ...).
// [Metrics.WatchServer] adds a server's own counters (connections, requests
// in flight, rejections by limit), [Metrics.WatchPool] a client's
// connection pool sizes (open and idle connections, addresses),
// [Metrics.WatchBreaker] a circuit breaker's state and counters and
// [Metrics.WatchBreakerGroup] those of every breaker of a
// circuitbreak.Group (per method, or per instance address). These are
// read at each scrape. [Metrics.BreakerTransitions] is a
// circuitbreak.Config.OnStateChange hook that counts every state change,
// which scrapes alone would miss:
//
//	petrel_breaker_transitions_total{breaker, from, to}   counter
package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/stats"
)

// Config configures a Metrics. Zero fields take their defaults.
type Config struct {
	// Registerer is where the collectors are registered. Default
	// prometheus.DefaultRegisterer.
	Registerer prometheus.Registerer
	// Namespace prefixes every metric name. Default "petrel".
	Namespace string
	// Buckets are the latency histogram's upper bounds in seconds. Default
	// DefaultBuckets.
	Buckets []float64
}

// DefaultBuckets spans 100 µs to 10 s: RPC latencies from a loopback call
// to a slow fan-out.
var DefaultBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Registerer: prometheus.DefaultRegisterer, Namespace: "petrel", Buckets: DefaultBuckets}
}

// Validate reports a Config that cannot work: histogram buckets that are
// not increasing, or NaN.
func (c *Config) Validate() error {
	for i, b := range c.Buckets {
		if math.IsNaN(b) {
			return fmt.Errorf("metrics: Config.Buckets[%d] is NaN", i)
		}
	}
	for i := 1; i < len(c.Buckets); i++ {
		if c.Buckets[i] <= c.Buckets[i-1] {
			return fmt.Errorf("metrics: Config.Buckets must be increasing: Buckets[%d] (%v) is not above Buckets[%d] (%v)", i, c.Buckets[i], i-1, c.Buckets[i-1])
		}
	}
	return nil
}

// Metrics holds the collectors. It is safe for concurrent use.
type Metrics struct {
	reg       prometheus.Registerer
	ns        string
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	inFlight  *prometheus.GaugeVec
	reqBytes  *prometheus.CounterVec
	respBytes *prometheus.CounterVec
	moves     *prometheus.CounterVec // breaker transitions (BreakerTransitions)
}

// New makes the collectors and registers them on cfg.Registerer. It fails
// when cfg is invalid or the names are already registered there, and then
// leaves none of its collectors registered.
func New(cfg Config) (*Metrics, error) {
	def := DefaultConfig()
	if cfg.Registerer == nil {
		cfg.Registerer = def.Registerer
	}
	if cfg.Namespace == "" {
		cfg.Namespace = def.Namespace
	}
	if len(cfg.Buckets) == 0 {
		cfg.Buckets = def.Buckets
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	labels := []string{"side", "service", "method"}
	m := &Metrics{
		reg: cfg.Registerer,
		ns:  cfg.Namespace,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: cfg.Namespace, Name: "requests_total",
			Help: "RPC calls finished, by outcome (rpcerr code).",
		}, append(labels, "code")),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: cfg.Namespace, Name: "request_duration_seconds",
			Help:    "RPC call latency: client from Call to return, server from request read to reply written.",
			Buckets: cfg.Buckets,
		}, labels),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: cfg.Namespace, Name: "in_flight_requests",
			Help: "RPC calls started and not finished.",
		}, labels),
		reqBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: cfg.Namespace, Name: "request_bytes_total",
			Help: "Bytes of request payloads (Thrift message bodies).",
		}, labels),
		respBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: cfg.Namespace, Name: "response_bytes_total",
			Help: "Bytes of response payloads (Thrift message bodies).",
		}, labels),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: cfg.Namespace, Name: "breaker_transitions_total",
			Help: "Circuit breaker state changes, by breaker (or group) name and states.",
		}, []string{"breaker", "from", "to"}),
	}
	all := []struct {
		c    prometheus.Collector
		name string
	}{
		{m.requests, "requests_total"}, {m.latency, "request_duration_seconds"},
		{m.inFlight, "in_flight_requests"}, {m.reqBytes, "request_bytes_total"},
		{m.respBytes, "response_bytes_total"}, {m.moves, "breaker_transitions_total"},
	}
	for i, c := range all {
		if err := cfg.Registerer.Register(c.c); err != nil {
			// Take back those registered, so that a New after the
			// conflict is resolved can register them.
			for _, r := range all[:i] {
				cfg.Registerer.Unregister(r.c)
			}
			name := prometheus.BuildFQName(cfg.Namespace, "", c.name)
			if errors.As(err, new(prometheus.AlreadyRegisteredError)) {
				return nil, fmt.Errorf("metrics: registering %s: %w (one Metrics serves every client and server of a registry; for another set, set Config.Namespace or Config.Registerer)", name, err)
			}
			return nil, fmt.Errorf("metrics: registering %s: %w", name, err)
		}
	}
	return m, nil
}

// register registers a watch's collector c, its error naming the watch.
func (m *Metrics) register(watch, name string, c prometheus.Collector) error {
	if err := m.reg.Register(c); err != nil {
		return fmt.Errorf("metrics: %s(%q): %w", watch, name, err)
	}
	return nil
}

// ClientTracer returns the tracer to pass to client.WithTracer.
func (m *Metrics) ClientTracer() stats.Tracer { return tracer{m: m, side: "client"} }

// ServerTracer returns the tracer to pass to server.WithTracer.
func (m *Metrics) ServerTracer() stats.Tracer { return tracer{m: m, side: "server"} }

type tracer struct {
	m    *Metrics
	side string
}

func names(ctx context.Context) (service, method string) {
	if ri := rpcinfo.FromContext(ctx); ri != nil {
		return labelValue(ri.Callee), labelValue(ri.Method)
	}
	return "", ""
}

// labelValue returns s with each sequence of bytes that is not valid UTF-8
// replaced by U+FFFD: Prometheus panics on such a label value, and a
// client may call any method name (a proxy passes on the names it reads).
func labelValue(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func (t tracer) Start(ctx context.Context) context.Context {
	svc, method := names(ctx)
	t.m.inFlight.WithLabelValues(t.side, svc, method).Inc()
	return ctx
}

func (t tracer) Finish(ctx context.Context, st *stats.Stats) {
	svc, method := names(ctx)
	t.m.inFlight.WithLabelValues(t.side, svc, method).Dec()
	t.m.requests.WithLabelValues(t.side, svc, method, rpcerr.CodeOf(st.Error).String()).Inc()
	t.m.latency.WithLabelValues(t.side, svc, method).Observe(st.Latency().Seconds())
	if st.RequestSize > 0 {
		t.m.reqBytes.WithLabelValues(t.side, svc, method).Add(float64(st.RequestSize))
	}
	if st.ResponseSize > 0 {
		t.m.respBytes.WithLabelValues(t.side, svc, method).Add(float64(st.ResponseSize))
	}
}

// WatchServer exports s's own counters (server.Stats) under the label
// server=name: open connections, requests in flight, requests read,
// and rejections by limit (connections, qps, in_flight, shutting_down):
//
//	petrel_server_connections{server}
//	petrel_server_in_flight{server}
//	petrel_server_requests_read_total{server}
//	petrel_server_rejected_total{server, limit}
//
// They are read from s.Stats() at each scrape. It fails when a server of
// the same name is already watched, or s is nil.
func (m *Metrics) WatchServer(name string, s *server.Server) error {
	if s == nil {
		return fmt.Errorf("metrics: WatchServer(%q): the server is nil", name)
	}
	c := &serverCollector{s: s,
		conns: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "server", "connections"),
			"Open connections of the server.", nil, prometheus.Labels{"server": name}),
		inFlight: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "server", "in_flight"),
			"Requests the server read and has not answered.", nil, prometheus.Labels{"server": name}),
		requests: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "server", "requests_read_total"),
			"Requests the server read.", nil, prometheus.Labels{"server": name}),
		rejected: prometheus.NewDesc(prometheus.BuildFQName(m.ns, "server", "rejected_total"),
			"Connections and requests the server rejected, by limit.", []string{"limit"}, prometheus.Labels{"server": name}),
	}
	return m.register("WatchServer", name, c)
}

type serverCollector struct {
	s                                   *server.Server
	conns, inFlight, requests, rejected *prometheus.Desc
}

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.conns
	ch <- c.inFlight
	ch <- c.requests
	ch <- c.rejected
}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	sendConst(ch, c.conns, prometheus.GaugeValue, st.Connections)
	sendConst(ch, c.inFlight, prometheus.GaugeValue, st.InFlight)
	sendConst(ch, c.requests, prometheus.CounterValue, st.Requests)
	for _, r := range []struct {
		limit string
		n     int64
	}{
		{"connections", st.RejectedConnections},
		{"qps", st.RejectedQPS},
		{"in_flight", st.RejectedInFlight},
		{"shutting_down", st.RejectedShuttingDown},
	} {
		sendConst(ch, c.rejected, prometheus.CounterValue, r.n, r.limit)
	}
}

// sendConst sends a metric read at a scrape. NewConstMetric fails only on a
// label count that does not match the Desc, which each collector fixes in
// its code.
func sendConst(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v int64, labels ...string) {
	if m, err := prometheus.NewConstMetric(d, t, float64(v), labels...); err == nil {
		ch <- m
	}
}
