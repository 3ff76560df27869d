package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// nilPanicker's Echo panics with a nil value.
type nilPanicker struct{}

func (nilPanicker) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	var err error // a nil error, as in panic(err) after a check gone wrong
	panic(err)
}
func (nilPanicker) Notify(ctx context.Context, msg string) error { return nil }

// TestHandlerPanicNil: a handler that panics with a nil value is answered
// with INTERNAL_ERROR saying it panicked, also in a program whose go.mod
// declares a Go before 1.21, where GODEBUG panicnil=1 makes recover return
// nil for it: the call must not be answered as a success with an empty
// result. The panic is counted.
func TestHandlerPanicNil(t *testing.T) {
	for _, godebug := range []string{"panicnil=0", "panicnil=1"} {
		t.Run(godebug, func(t *testing.T) {
			t.Setenv("GODEBUG", godebug)
			s, addr := startWith(t, server.New(), nilPanicker{})
			c := dial(t, addr, transport.TTHeader)
			res, rep := c.call(1, "echo", "", nil)
			if rep.typ != thrift.EXCEPTION || rep.ex.Type != thrift.ExceptionInternalError ||
				!strings.Contains(rep.ex.Message, "panic in handler Echo.echo") {
				t.Fatalf("a handler's panic(nil) answered with %v %+v %+v, want INTERNAL_ERROR saying it panicked", rep.typ, rep.ex, res)
			}
			if got := s.Stats().Panics; got != 1 {
				t.Errorf("Stats().Panics = %d, want 1", got)
			}
		})
	}
}
