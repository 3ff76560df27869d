package tracing_test

import (
	"context"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/tracing"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/stats"
)

// Pass the tracers to clients and servers; a handler that calls other
// services with its context continues the trace. Here one client call is
// reported by hand: the client tracer starts a span and puts the W3C trace
// context in the call's metainfo, which TTHeader carries to the server.
func Example() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	cfg := tracing.Config{TracerProvider: tp}
	_ = server.New(server.WithTracer(tracing.NewServerTracer(cfg)))
	if c, err := client.New("Hello", client.WithHostPorts("127.0.0.1:8888"), client.WithTracer(tracing.NewClientTracer(cfg))); err == nil {
		c.Close()
	}

	tr := tracing.NewClientTracer(cfg)
	ctx := tr.Start(rpcinfo.NewContext(context.Background(), &rpcinfo.RPCInfo{Callee: "Hello", Method: "echo"}))
	tp0, _ := metainfo.GetValue(ctx, "traceparent")
	t0 := time.Now()
	tr.Finish(ctx, &stats.Stats{Side: stats.Client, Begin: t0, End: t0.Add(time.Millisecond)})

	for _, s := range exp.GetSpans() {
		fmt.Println(s.Name, s.SpanKind, len(tp0) == 55 && tp0[3:35] == s.SpanContext.TraceID().String())
	}
	// Output:
	// Hello/echo client true
}
