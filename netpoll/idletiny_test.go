//go:build linux

package netpoll_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestTinyIdleTimeoutDoesNotSpin: an idle timeout of a nanosecond on a
// connection whose handler is busy costs no CPU while the handler runs (its
// check used to re-arm a zero timer over and over), and the connection
// still closes once the handler is done.
func TestTinyIdleTimeoutDoesNotSpin(t *testing.T) {
	inHandler, release := make(chan struct{}), make(chan struct{})
	_, addr := serve(t, netpoll.Config{
		OnRequest: func(ctx context.Context, c netpoll.Connection) error {
			if err := c.SetIdleTimeout(time.Nanosecond); err != nil {
				t.Errorf("SetIdleTimeout(1ns): %v", err)
			}
			close(inHandler)
			<-release
			return echo(ctx, c)
		},
	})
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write([]byte("x"))
	<-inHandler
	const window = 300 * time.Millisecond
	before := cpuTime()
	time.Sleep(window) // the span measured, not a synchronization
	used := cpuTime() - before
	close(release)
	if used > window/3 {
		t.Errorf("the process used %v of CPU in %v while a handler with a 1ns idle timeout ran", used, window)
	}
	raw.SetReadDeadline(time.Now().Add(2 * time.Second))
	got := make([]byte, 2)
	n, err := raw.Read(got)
	if n != 1 || err != nil {
		t.Fatalf("read %q, %v; want the echo", got[:n], err)
	}
	if n, err := raw.Read(got); err == nil {
		t.Fatalf("read %q after the echo; want the idle connection closed", got[:n])
	}
}
