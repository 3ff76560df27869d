package metrics_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/contrib/metrics"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/stats"
)

// TestInvalidUTF8Labels: a method or service name that is not valid UTF-8
// (client.Call takes any string, and a proxy passes on names it read) is a
// label value Prometheus refuses with a panic. The tracers count such a
// call under the name with each bad byte sequence replaced by U+FFFD,
// instead of panicking on the call's goroutine; a breaker name is treated
// the same.
func TestInvalidUTF8Labels(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ri := &rpcinfo.RPCInfo{Callee: "Hel\xfflo", Method: "ec\xc3ho"}
	ctx := rpcinfo.NewContext(context.Background(), ri)
	try := func(what string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s panicked: %v", what, r)
			}
		}()
		f()
	}
	for _, tr := range []stats.Tracer{m.ClientTracer(), m.ServerTracer()} {
		try("a traced call of method \"ec\\xc3ho\" of service \"Hel\\xfflo\"", func() {
			tr.Finish(tr.Start(ctx), &stats.Stats{})
		})
	}
	try("a transition counted by BreakerTransitions(\"br\\xffk\")", func() {
		m.BreakerTransitions("br\xffk")("", circuitbreak.Closed, circuitbreak.Open)
	})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	// The key lists the labels in the order Gather sorts them: by name.
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			key := f.GetName()
			for _, l := range mt.GetLabel() {
				if n := l.GetName(); n == "service" || n == "method" || n == "side" || n == "breaker" {
					key += " " + n + "=" + l.GetValue()
				}
			}
			switch {
			case mt.Counter != nil:
				got[key] = mt.Counter.GetValue()
			case mt.Gauge != nil:
				got[key] = mt.Gauge.GetValue()
			}
		}
	}
	for key, want := range map[string]float64{
		"petrel_requests_total method=ec\uFFFDho service=Hel\uFFFDlo side=client":     1,
		"petrel_requests_total method=ec\uFFFDho service=Hel\uFFFDlo side=server":     1,
		"petrel_in_flight_requests method=ec\uFFFDho service=Hel\uFFFDlo side=client": 0,
		"petrel_in_flight_requests method=ec\uFFFDho service=Hel\uFFFDlo side=server": 0,
		"petrel_breaker_transitions_total breaker=br\uFFFDk":                          1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s: %v (present %v), want %v; have %v", key, v, ok, want, got)
		}
	}
}
