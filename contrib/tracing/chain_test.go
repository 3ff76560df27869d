package tracing_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/internal/testsvc"
	"github.com/petrel-rpc/petrel/contrib/tracing"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/stats"
)

// TestChainedTracers: two tracers, each exporting to its own backend,
// chained on the client and on the server. Both keep their span under
// OpenTelemetry's one context key; each must end its own span, so that
// each backend gets a client and a server span of the call.
func TestChainedTracers(t *testing.T) {
	var exps [2]*tracetest.InMemoryExporter
	var cfgs [2]tracing.Config
	for i := range exps {
		exps[i] = tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exps[i]))
		defer tp.Shutdown(context.Background())
		cfgs[i] = tracing.Config{TracerProvider: tp}
	}
	srv := stats.Chain(tracing.NewServerTracer(cfgs[0]), tracing.NewServerTracer(cfgs[1]))
	_, addr := testsvc.Start(t, &testsvc.Echo{}, server.WithTracer(srv))
	cli, err := hello.NewHelloClient("Hello", client.WithHostPorts(addr),
		client.WithTracer(stats.Chain(tracing.NewClientTracer(cfgs[0]), tracing.NewClientTracer(cfgs[1]))))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Echo(context.Background(), &hello.EchoRequest{Action: "echo", Msg: "two"}); err != nil {
		t.Fatal(err)
	}
	for i, exp := range exps {
		spans := waitSpans(exp, 2)
		kinds := map[string]int{}
		for _, s := range spans {
			kinds[s.SpanKind.String()]++
		}
		if len(spans) != 2 || kinds["client"] != 1 || kinds["server"] != 1 {
			t.Errorf("backend %d got spans of kinds %v, want one client and one server span", i, kinds)
		}
	}
}
