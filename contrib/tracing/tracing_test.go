package tracing_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/internal/testsvc"
	"github.com/petrel-rpc/petrel/contrib/tracing"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/server"
)

// TestTraceAcrossHops: a caller calls server A, whose handler calls server
// B with its own context. Every span (the caller's, the client and server
// spans of both hops) must belong to one trace, each the child of the one
// before it.
func TestTraceAcrossHops(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	cfg := tracing.Config{TracerProvider: tp}

	_, addrB := testsvc.Start(t, &testsvc.Echo{}, server.WithTracer(tracing.NewServerTracer(cfg)))
	cliB, err := hello.NewHelloClient("Hello", client.WithHostPorts(addrB), client.WithCallerName("A"), client.WithTracer(tracing.NewClientTracer(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	defer cliB.Close()
	next := func(ctx context.Context, req *hello.EchoRequest) error {
		_, err := cliB.Echo(ctx, req)
		return err
	}
	_, addrA := testsvc.Start(t, &testsvc.Echo{Next: next}, server.WithTracer(tracing.NewServerTracer(cfg)))
	cliA, err := hello.NewHelloClient("Hello", client.WithHostPorts(addrA), client.WithCallerName("caller"), client.WithTracer(tracing.NewClientTracer(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	defer cliA.Close()

	ctx, root := tp.Tracer("test").Start(context.Background(), "caller")
	if _, err := cliA.Echo(ctx, &hello.EchoRequest{Action: "echo", Msg: "hop"}); err != nil {
		t.Fatal(err)
	}
	root.End()

	spans := waitSpans(exp, 5)
	children := map[trace.SpanID][]tracetest.SpanStub{}
	for _, s := range spans {
		children[s.Parent.SpanID()] = append(children[s.Parent.SpanID()], s)
		t.Logf("span %-12s kind %-8s trace %s span %s parent %s (remote %v)", s.Name, s.SpanKind, s.SpanContext.TraceID(), s.SpanContext.SpanID(), s.Parent.SpanID(), s.Parent.IsRemote())
	}
	if len(spans) != 5 {
		t.Fatalf("%d spans, want 5 (caller, client and server of two hops)", len(spans))
	}
	// Walk from the caller's span down: each span has exactly one child,
	// of the kind the path of the call says.
	trace0 := root.SpanContext().TraceID()
	path := []struct {
		kind   trace.SpanKind
		name   string
		caller string
	}{
		{trace.SpanKindClient, "Hello/echo", "caller"},
		{trace.SpanKindServer, "Hello/echo", "caller"},
		{trace.SpanKindClient, "Hello/echo", "A"},
		{trace.SpanKindServer, "Hello/echo", "A"},
	}
	var chain []tracetest.SpanStub
	parent := root.SpanContext().SpanID()
	for i, want := range path {
		kids := children[parent]
		if len(kids) != 1 {
			t.Fatalf("hop %d: span %s has %d children, want 1", i, parent, len(kids))
		}
		s := kids[0]
		attrs := map[string]string{}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.Emit()
		}
		if s.SpanKind != want.kind || s.Name != want.name || attrs["rpc.petrel.caller"] != want.caller {
			t.Fatalf("hop %d: span %s %s caller %q, want %s %s caller %q", i, s.SpanKind, s.Name, attrs["rpc.petrel.caller"], want.kind, want.name, want.caller)
		}
		if s.SpanContext.TraceID() != trace0 {
			t.Fatalf("hop %d: trace %s, want %s", i, s.SpanContext.TraceID(), trace0)
		}
		if remote := s.SpanKind == trace.SpanKindServer; s.Parent.IsRemote() != remote {
			t.Fatalf("hop %d: parent remote %v, want %v", i, s.Parent.IsRemote(), remote)
		}
		if attrs["rpc.service"] != "Hello" || attrs["rpc.method"] != "echo" || attrs["rpc.petrel.code"] != "ok" {
			t.Fatalf("hop %d: attributes %v", i, attrs)
		}
		chain = append(chain, s)
		parent = s.SpanContext.SpanID()
	}
	// The second hop happens inside the first server's handler.
	a, b := chain[1], chain[2]
	if b.StartTime.Before(a.StartTime) || b.EndTime.After(a.EndTime) {
		t.Fatalf("client span to B [%v, %v] is not inside server span A [%v, %v]", b.StartTime, b.EndTime, a.StartTime, a.EndTime)
	}
	t.Logf("one trace %s spans caller -> A -> B: %d spans", trace0, len(spans))
}

func TestErrorStatus(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	cfg := tracing.Config{TracerProvider: tp}
	_, addr := testsvc.Start(t, &testsvc.Echo{}, server.WithTracer(tracing.NewServerTracer(cfg)))
	cli, err := hello.NewHelloClient("A", client.WithHostPorts(addr), client.WithTracer(tracing.NewClientTracer(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Echo(context.Background(), &hello.EchoRequest{Action: "fail"}); err == nil {
		t.Fatal("fail succeeded")
	}
	cli.Close()
	spans := waitSpans(exp, 2)
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for _, s := range spans {
		if s.Status.Code != codes.Error || len(s.Events) == 0 {
			t.Fatalf("span %s %s: status %v, %d events", s.SpanKind, s.Name, s.Status, len(s.Events))
		}
	}
}

// waitSpans returns the exported spans once there are n of them (a server
// ends its span after writing the reply, which may be after the caller has
// it), or after 2 s.
func waitSpans(exp *tracetest.InMemoryExporter, n int) tracetest.SpanStubs {
	for deadline := time.Now().Add(2 * time.Second); len(exp.GetSpans()) < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return exp.GetSpans()
}
