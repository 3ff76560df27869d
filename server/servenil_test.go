package server_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
)

// TestServeNilListener: Serve(nil) (a listener whose error was dropped)
// returns an error saying so instead of panicking, before and after a
// service is registered.
func TestServeNilListener(t *testing.T) {
	s := server.New()
	if err := s.Serve(nil); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Fatalf("Serve(nil) without services = %v, want an error about the nil listener", err)
	}
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(nil); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Fatalf("Serve(nil) = %v, want an error about the nil listener", err)
	}
	var tl *net.TCPListener
	if err := server.New(server.WithListener(tl)).Run(); err == nil || !strings.Contains(err.Error(), "nil *net.TCPListener") {
		t.Fatalf("Run with WithListener(a nil *net.TCPListener) = %v, want an error naming it", err)
	}
	s2 := server.New(server.WithMaxQPS(-1))
	if err := s2.Serve(nil); err == nil {
		t.Fatal("Serve(nil) with a bad option: no error")
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}
