package metrics_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/metrics"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/stats"
)

// Register the collectors once per process, pass the tracers to the
// clients and servers to measure, and serve the registry with promhttp.
// Here one call is reported to the client tracer by hand.
func Example() {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = server.New(server.WithTracer(m.ServerTracer()))
	if c, err := client.New("Hello", client.WithHostPorts("127.0.0.1:8888"), client.WithTracer(m.ClientTracer())); err == nil {
		c.Close()
	}

	tr := m.ClientTracer()
	ctx := tr.Start(rpcinfo.NewContext(context.Background(), &rpcinfo.RPCInfo{Callee: "Hello", Method: "echo"}))
	t0 := time.Now()
	tr.Finish(ctx, &stats.Stats{Side: stats.Client, Begin: t0, End: t0.Add(3 * time.Millisecond), RequestSize: 20})

	families, _ := reg.Gather()
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			var labels string
			for _, l := range mt.GetLabel() {
				labels += " " + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case mt.GetCounter() != nil:
				fmt.Printf("%s%s: %v\n", f.GetName(), labels, mt.GetCounter().GetValue())
			case mt.GetGauge() != nil:
				fmt.Printf("%s%s: %v\n", f.GetName(), labels, mt.GetGauge().GetValue())
			case mt.GetHistogram() != nil:
				fmt.Printf("%s%s: %d observed\n", f.GetName(), labels, mt.GetHistogram().GetSampleCount())
			}
		}
	}
	// Output:
	// petrel_in_flight_requests method=echo service=Hello side=client: 0
	// petrel_request_bytes_total method=echo service=Hello side=client: 20
	// petrel_request_duration_seconds method=echo service=Hello side=client: 1 observed
	// petrel_requests_total code=ok method=echo service=Hello side=client: 1
}
