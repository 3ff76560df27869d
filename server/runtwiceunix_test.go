package server_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestRunTwiceKeepsServedListener: a second Run on a server serving its
// WithListener listener says it was called twice and leaves that listener
// alone. It closed it, which for a Unix socket removes its file: the
// server went on serving a socket no client could reach any more.
func TestRunTwiceKeepsServedListener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.WithListener(ln))
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() { first <- s.Run() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := <-first; err != nil {
			t.Errorf("first Run: %v", err)
		}
	}()
	c := dialUnix(t, path)
	if res, _ := c.call(1, "echo", "a", nil); res.Success.GetMsg() != "a" {
		t.Fatalf("first call: %+v", res)
	}
	if err := s.Run(); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a second Run = %v, want an error saying it was called twice", err)
	}
	c2 := dialUnix(t, path)
	if res, _ := c2.call(2, "echo", "b", nil); res.Success.GetMsg() != "b" {
		t.Fatalf("a call after the second Run: %+v", res)
	}
}

func dialUnix(t *testing.T, path string) *testConn {
	t.Helper()
	c, err := netpoll.DialConnection("unix", path, time.Second)
	if err != nil {
		t.Fatalf("dialing %s: %v", path, err)
	}
	c.SetReadTimeout(5 * time.Second)
	t.Cleanup(func() { c.Close() })
	return &testConn{t: t, conn: c, proto: transport.Framed}
}
