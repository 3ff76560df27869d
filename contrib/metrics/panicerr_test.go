package metrics_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/contrib/metrics"
	"github.com/petrel-rpc/petrel/rpcinfo"
	"github.com/petrel-rpc/petrel/stats"
)

// wrapErr wraps a cause, its Unwrap reading a field as most do: a nil
// *wrapErr returned as an error (`var e *wrapErr; return e`) panics when
// errors.As looks through it.
type wrapErr struct{ cause error }

func (e *wrapErr) Error() string { return "wrapped" }
func (e *wrapErr) Unwrap() error { return e.cause }

// TestErrorWhoseMethodsPanic: the server hands the tracer the handler's
// error, which may be a nil pointer whose Unwrap panics (the server answers
// such a call with INTERNAL_ERROR saying so). The call is counted with code
// "internal" instead of Finish panicking between the in-flight gauge and
// the counters (on the client the panic would leave Call).
func TestErrorWhoseMethodsPanic(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := rpcinfo.NewContext(context.Background(), &rpcinfo.RPCInfo{Callee: "Hello", Method: "echo"})
	var nilErr *wrapErr
	for _, tr := range []stats.Tracer{m.ClientTracer(), m.ServerTracer()} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Finish with a nil %T as the error panicked: %v", nilErr, r)
				}
			}()
			tr.Finish(tr.Start(ctx), &stats.Stats{Error: nilErr})
		}()
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "petrel_requests_total" {
			continue
		}
		for _, mt := range f.GetMetric() {
			var code, side string
			for _, l := range mt.GetLabel() {
				switch l.GetName() {
				case "code":
					code = l.GetValue()
				case "side":
					side = l.GetValue()
				}
			}
			counted[side+" "+code] = mt.GetCounter().GetValue()
		}
	}
	for _, side := range []string{"client", "server"} {
		if counted[side+" internal"] != 1 {
			t.Errorf("%s: petrel_requests_total by side and code %v, want {%s internal} 1", side, counted, side)
		}
	}
}
