package server_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestStopErrorCounts: Stop's error with one handler still running says
// "1 request in flight", not "1 requests", and counts connections in the
// same grammar; a second Stop that times out says the same.
func TestStopErrorCounts(t *testing.T) {
	h := &blockHandler{entered: make(chan struct{}, 1), release: make(chan struct{}), kept: make(chan context.Context, 1)}
	s, addr, served := serveAsync(t, h, server.WithExitWaitTime(100*time.Millisecond))
	c := dial(t, addr, transport.TTHeader)
	if err := c.send("echo", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "block"}}, nil); err != nil {
		t.Fatal(err)
	}
	<-h.entered
	bad := regexp.MustCompile(`\b1 (requests|connections)\b`)
	for i := 0; i < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := s.Stop(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), " 1 request in flight ") || bad.MatchString(err.Error()) {
			t.Errorf("Stop #%d = %v; want DeadlineExceeded saying \"1 request in flight\" in the singular", i+1, err)
		}
	}
	close(h.release)
	if err := s.Stop(context.Background()); err != nil {
		t.Errorf("Stop after release: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
