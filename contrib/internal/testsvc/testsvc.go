// Package testsvc starts Petrel servers of the hello example's service on
// loopback ports for the contrib module's tests.
package testsvc

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/server"
)

// Start serves h (service "Hello") with opts on 127.0.0.1 and a free port,
// stops the server when the test ends, and returns it with its address.
func Start(t testing.TB, h hello.Hello, opts ...server.Option) (*server.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(append(opts, server.WithListener(ln))...)
	if err := hello.RegisterHelloService(s, h); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

// Echo answers Echo with its request (an error for the action "fail") and
// fails Greet for an empty name; Next, when set, is called by Echo first (a
// second hop).
type Echo struct {
	Next func(ctx context.Context, req *hello.EchoRequest) error
}

// Echo returns req's fields, after calling Next when set.
func (e *Echo) Echo(ctx context.Context, req *hello.EchoRequest) (*hello.EchoResponse, error) {
	if e.Next != nil {
		if err := e.Next(ctx, req); err != nil {
			return nil, err
		}
	}
	if req.Action == "fail" {
		return nil, errors.New("testsvc: failing as asked")
	}
	return &hello.EchoResponse{Action: req.Action, Msg: req.Msg}, nil
}

// Greet greets name; an empty name is an InvalidName.
func (e *Echo) Greet(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", &hello.InvalidName{Name: name, Reason: "empty"}
	}
	return "hello " + name, nil
}

// Notify does nothing.
func (e *Echo) Notify(ctx context.Context, event string) error { return nil }
