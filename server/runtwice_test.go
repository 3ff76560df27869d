package server_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
)

// TestRunTwice: a second Run on a serving server says it was called twice,
// not that its own address is in use.
func TestRunTwice(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := server.New(server.WithListenAddress(addr))
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() { first <- s.Run() }()
	for deadline := time.Now().Add(5 * time.Second); s.Addr() == nil; {
		if time.Now().After(deadline) {
			t.Fatal("Run did not start serving in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	err = s.Run()
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a second Run = %v, want an error saying Run was called twice", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := <-first; err != nil {
		t.Errorf("first Run: %v", err)
	}
}
