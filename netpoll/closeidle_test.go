//go:build linux

package netpoll_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestShutdownDispatchesInputMetWhileClosingIdle: Shutdown's closeIdle
// takes a connection's processing flag to close it if idle; input the
// poller reads meanwhile is not dispatched by the poller (the flag is
// taken), so closeIdle, finding it, must dispatch it. It gave the flag
// back only: the input sat unserved until Shutdown's context ended, and
// Shutdown, its handlers all instant, returned the context's error. Each
// trial makes 128 idle connections send as Shutdown starts; the race is
// narrow, and a few seconds of trials met it in most runs.
func TestShutdownDispatchesInputMetWhileClosingIdle(t *testing.T) {
	const conns = 128
	deadline := time.Now().Add(3 * time.Second)
	for trial := 0; time.Now().Before(deadline); trial++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		loop, err := netpoll.NewEventLoop(netpoll.Config{OnRequest: echo})
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- loop.Serve(ln) }()
		cs := make([]net.Conn, conns)
		for i := range cs {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Read(make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
			cs[i] = c
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Add(1)
			go func(c net.Conn) {
				defer wg.Done()
				<-start
				c.Write([]byte("y"))
				c.Read(make([]byte, 1)) // a reply or the close
			}(c)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 1*time.Second)
		close(start)
		t0 := time.Now()
		err = loop.Shutdown(ctx)
		took := time.Since(t0)
		cancel()
		<-served
		wg.Wait()
		for _, c := range cs {
			c.Close()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("trial %d: Shutdown with only instant handlers took %v and returned %v: a connection's input was left undispatched", trial, took, err)
		}
		if err != nil {
			t.Fatalf("trial %d: Shutdown = %v", trial, err)
		}
	}
}
