// Package tracing traces Petrel calls with OpenTelemetry
// (go.opentelemetry.io/otel).
//
// [NewClientTracer] and [NewServerTracer] return stats.Tracer values for
// client.WithTracer and server.WithTracer. Each call gets a span (kind
// client or server) named "Service/method", with the attributes rpc.system
// ("petrel"), rpc.service, rpc.method, the rpcerr code and the payload
// sizes, events for the moments the request and reply were sent and
// received, and an error status for a failed call.
//
// Trace context crosses hops in the call's metainfo: the client injects
// the W3C trace context ("traceparent", "tracestate") as transient
// metainfo values, which TTHeader carries in its string key-values
// (RPC_TRANSIT_traceparent); the server extracts them and starts its span
// as the remote parent's child. A handler that calls another service with
// its own context continues the same trace. Transports without headers
// (Framed, Buffered) carry no metainfo, so there each server starts a new
// trace.
package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/stats"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/petrel-rpc/petrel/contrib/tracing"

// Config configures the tracers. Zero fields take their defaults.
type Config struct {
	// TracerProvider makes the tracer. Default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator writes and reads the trace context in metainfo. Default
	// propagation.TraceContext{} (W3C traceparent and tracestate).
	Propagator propagation.TextMapPropagator
}

func (c Config) fill() Config {
	if c.TracerProvider == nil {
		c.TracerProvider = otel.GetTracerProvider()
	}
	if c.Propagator == nil {
		c.Propagator = propagation.TraceContext{}
	}
	return c
}

type tracer struct {
	t    trace.Tracer
	prop propagation.TextMapPropagator
	kind trace.SpanKind
}

// NewClientTracer returns the tracer to pass to client.WithTracer.
func NewClientTracer(cfg Config) stats.Tracer {
	cfg = cfg.fill()
	return &tracer{t: cfg.TracerProvider.Tracer(ScopeName), prop: cfg.Propagator, kind: trace.SpanKindClient}
}

// NewServerTracer returns the tracer to pass to server.WithTracer.
func NewServerTracer(cfg Config) stats.Tracer {
	cfg = cfg.fill()
	return &tracer{t: cfg.TracerProvider.Tracer(ScopeName), prop: cfg.Propagator, kind: trace.SpanKindServer}
}

// Attribute keys (OpenTelemetry's RPC semantic conventions where they have
// one).
const (
	keySystem   = attribute.Key("rpc.system")
	keyService  = attribute.Key("rpc.service")
	keyMethod   = attribute.Key("rpc.method")
	keyCode     = attribute.Key("rpc.petrel.code")
	keyReqSize  = attribute.Key("rpc.request.size")
	keyRespSize = attribute.Key("rpc.response.size")
	keyCaller   = attribute.Key("rpc.petrel.caller")
	keyPeer     = attribute.Key("network.peer.address")
)

func (t *tracer) Start(ctx context.Context) context.Context {
	ri := rpcinfo.FromContext(ctx)
	name := "petrel"
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, keySystem.String("petrel"))
	if ri != nil {
		name = ri.Callee + "/" + ri.Method
		attrs = append(attrs, keyService.String(ri.Callee), keyMethod.String(ri.Method))
		if ri.Caller != "" {
			attrs = append(attrs, keyCaller.String(ri.Caller))
		}
	}
	if t.kind == trace.SpanKindServer {
		if ri != nil && ri.RemoteAddr != nil {
			attrs = append(attrs, keyPeer.String(ri.RemoteAddr.String()))
		}
		ctx = t.prop.Extract(ctx, incoming{ctx})
	}
	ctx, _ = t.t.Start(ctx, name, trace.WithSpanKind(t.kind), trace.WithAttributes(attrs...))
	if t.kind == trace.SpanKindClient {
		out := &outgoing{ctx: ctx}
		t.prop.Inject(ctx, out)
		ctx = out.ctx
	}
	return ctx
}

func (t *tracer) Finish(ctx context.Context, st *stats.Stats) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	code, text, ok := outcome(st.Error)
	span.SetAttributes(keyCode.String(code.String()), keyReqSize.Int(st.RequestSize), keyRespSize.Int(st.ResponseSize))
	if t.kind == trace.SpanKindClient {
		if ri := rpcinfo.FromContext(ctx); ri != nil && ri.RemoteAddr != nil {
			span.SetAttributes(keyPeer.String(ri.RemoteAddr.String()))
		}
	}
	if !st.Send.IsZero() {
		span.AddEvent("sent", trace.WithTimestamp(st.Send))
	}
	if !st.Receive.IsZero() && t.kind == trace.SpanKindClient {
		span.AddEvent("received", trace.WithTimestamp(st.Receive))
	}
	if !st.HandleStart.IsZero() {
		span.AddEvent("handler started", trace.WithTimestamp(st.HandleStart))
		span.AddEvent("handler finished", trace.WithTimestamp(st.HandleEnd))
	}
	if st.Error != nil {
		if ok {
			span.RecordError(st.Error)
		} else {
			span.AddEvent("exception", trace.WithAttributes(
				attribute.String("exception.type", fmt.Sprintf("%T", st.Error)),
				attribute.String("exception.message", text)))
		}
		span.SetStatus(codes.Error, code.String())
	}
	span.End(trace.WithTimestamp(st.End))
}

// outcome returns err's rpcerr code and text, and reports whether err's
// methods ran: a handler may return an error whose Error, Unwrap or As
// panics (a nil *T whose Error reads a field), which the server answers
// with INTERNAL_ERROR; the span is then ended with code internal and a
// text saying what panicked, rather than left open by the panic.
func outcome(err error) (code rpcerr.Code, text string, ok bool) {
	if err == nil {
		return rpcerr.OK, "", true
	}
	defer func() {
		if r := recover(); r != nil {
			code, ok = rpcerr.Internal, false
			text = fmt.Sprintf("tracing: reading the call's error (%T) panicked: %v", err, r)
		}
	}()
	code = rpcerr.CodeOf(err)
	return code, err.Error(), true
}

// incoming reads the trace context a server received, from the caller's
// transient metainfo.
type incoming struct{ ctx context.Context }

func (c incoming) Get(key string) string {
	v, _ := metainfo.GetValue(c.ctx, key)
	return v
}

func (c incoming) Set(key, value string) {}

func (c incoming) Keys() []string {
	all := metainfo.GetAllValues(c.ctx)
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	return keys
}

// outgoing writes the trace context a client sends into transient metainfo
// (one hop: each server sends its own span onwards).
type outgoing struct{ ctx context.Context }

func (c *outgoing) Get(key string) string {
	v, _ := metainfo.GetValue(c.ctx, key)
	return v
}

func (c *outgoing) Set(key, value string) { c.ctx = metainfo.WithValue(c.ctx, key, value) }

func (c *outgoing) Keys() []string { return nil }
