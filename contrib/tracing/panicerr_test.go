package tracing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/petrel-rpc/petrel/contrib/tracing"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/stats"
)

// detailErr is an error type whose Error dereferences its receiver, as most
// do: a nil *detailErr returned as an error (the handler's `var e
// *detailErr; return e`) panics when its text is read.
type detailErr struct{ msg string }

func (e *detailErr) Error() string { return e.msg }

// TestErrorWhoseMethodsPanic: the server hands the tracer the error the
// handler returned, which may be a nil pointer whose Error panics (the
// server answers such a call with INTERNAL_ERROR saying so). The span must
// still be ended, with an error status and an event naming the error's
// type, and Finish must not panic (on the client it would panic out of
// Call).
func TestErrorWhoseMethodsPanic(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	cfg := tracing.Config{TracerProvider: tp}
	ri := &rpcinfo.RPCInfo{Callee: "Hello", Method: "echo"}
	ctx := rpcinfo.NewContext(context.Background(), ri)
	var nilErr *detailErr
	for _, tr := range []stats.Tracer{tracing.NewClientTracer(cfg), tracing.NewServerTracer(cfg)} {
		begin := time.Now()
		sctx := tr.Start(ctx)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%T: Finish with a nil %T as the error panicked: %v", tr, nilErr, r)
				}
			}()
			tr.Finish(sctx, &stats.Stats{Begin: begin, End: time.Now(), Error: nilErr})
		}()
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended, want 2 (a client and a server span)", len(spans))
	}
	for _, s := range spans {
		if s.Status.Code != codes.Error {
			t.Errorf("%s span: status %v, want an error", s.SpanKind, s.Status)
		}
		named := false
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				if strings.Contains(a.Value.Emit(), "*tracing_test.detailErr") {
					named = true
				}
			}
		}
		if !named {
			t.Errorf("%s span: no event names the error's type *tracing_test.detailErr: %+v", s.SpanKind, s.Events)
		}
	}
}
