package client_test

import (
	"context"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// panicLenResult is a result whose hand-written codec decodes but whose
// BLength panics (a nil field its sizing reads, say).
type panicLenResult struct{ echoResult }

func (*panicLenResult) BLength() int { panic("result BLength bug") }

// TestTracerFinishesWhenResultBLengthPanics: on the multiplexed pool the
// client sizes the reply for Stats.ResponseSize with result.BLength()
// after the call, and did so outside the recovery that gives the tracer
// its Finish when the call panics: a result codec whose BLength panicked
// left the tracer without Finish (an in-flight gauge stuck at +1, a span
// never ended). As for the server's tracer (internal/codecsize), a size
// that cannot be read is 0: the call, decoded already, succeeds and is
// finished.
func TestTracerFinishesWhenResultBLengthPanics(t *testing.T) {
	_, addr := startPetrel(t)
	tr := &finishCounter{}
	c := newClient(t, addr, setup{"mux/ttheader", transport.TTHeader, client.WithMuxConnection(1)}, client.WithTracer(tr))
	var recovered any
	var err error
	func() {
		defer func() { recovered = recover() }()
		err = c.Call(context.Background(), "echo", false, &echoArgs{Msg: []byte("x")}, &panicLenResult{})
	}()
	if tr.starts != 1 || tr.finishes != 1 {
		t.Fatalf("tracer saw %d Start and %d Finish calls, want 1 and 1: the call's Finish was skipped", tr.starts, tr.finishes)
	}
	if recovered != nil || err != nil || tr.err != nil {
		t.Fatalf("Call panicked with %v, returned %v, Finish got %v; want a success: the reply was decoded", recovered, err, tr.err)
	}
}
