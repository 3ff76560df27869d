package server_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
)

// TestDeregisterGraceBeforeRegistry: WithDeregisterGrace given before
// WithRegistry must still make Stop keep serving for the grace period
// after deregistering.
func TestDeregisterGraceBeforeRegistry(t *testing.T) {
	for _, order := range []string{"registry,grace", "grace,registry"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		const grace = 500 * time.Millisecond
		reg := &fakeRegistry{}
		opts := []server.Option{server.WithListener(ln), server.WithRegistry(reg, discovery.Instance{}), server.WithDeregisterGrace(grace)}
		if order == "grace,registry" {
			opts = []server.Option{server.WithListener(ln), server.WithDeregisterGrace(grace), server.WithRegistry(reg, discovery.Instance{})}
		}
		s := server.New(opts...)
		if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Run() }()
		for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
			if ev, _ := reg.snapshot(); len(ev) == 1 {
				break
			}
			if time.Since(start) > 3*time.Second {
				t.Fatal("not registered")
			}
		}
		start := time.Now()
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		<-done
		if d < grace {
			t.Errorf("options %s: Stop returned after %v, before the grace period %v: the grace was dropped", order, d, grace)
		}
	}
}

// TestNilRegistryRefused: WithRegistry(nil, ...) is accepted silently and
// the server runs without ever registering (WithResolver(nil) on the
// client is a configuration error).
func TestNilRegistryRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.WithListener(ln), server.WithRegistry(nil, discovery.Instance{Address: "10.0.0.1:8888"}))
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "nil Registry") {
			t.Fatalf("Run with WithRegistry(nil) = %v, want an error naming the nil Registry", err)
		}
		return
	case <-time.After(300 * time.Millisecond):
	}
	s.Stop(context.Background())
	<-done
	t.Errorf("Run with WithRegistry(nil) served for 300ms without error: the nil registry was silently ignored")
}
