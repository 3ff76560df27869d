//go:build linux

package netpoll_test

import (
	"context"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// TestAbnormalEndWaitsForHolds: an OnRequest that holds the connection for
// a reply another goroutine writes, and then panics or calls
// runtime.Goexit, ends the connection's reading, but the connection stays
// open for the held reply, which reaches the peer; the connection closes at
// the last Unhold, and input sent meanwhile is not served. It used to close
// at once, whatever the holds, and the reply was lost.
func TestAbnormalEndWaitsForHolds(t *testing.T) {
	for _, how := range []string{"Goexit", "panic"} {
		t.Run(how, func(t *testing.T) {
			var calls atomic.Int32
			replied := make(chan error, 1)
			sentMore := make(chan struct{})
			_, addr := serve(t, netpoll.Config{
				PanicHandler: func(any, []byte) {},
				OnRequest: func(_ context.Context, c netpoll.Connection) error {
					calls.Add(1)
					if _, err := c.Reader().Next(1); err != nil {
						return err
					}
					c.Reader().Release()
					c.Hold()
					go func() {
						defer c.Unhold()
						// Once the reader's end has been dealt with.
						deadline := time.Now().Add(5 * time.Second)
						for c.IsActive() && time.Now().Before(deadline) {
							time.Sleep(time.Millisecond)
						}
						c.Writer().WriteString("reply")
						replied <- c.Writer().Flush()
						<-sentMore
						// A window for the input sent meanwhile to be
						// (wrongly) served; not a synchronization.
						time.Sleep(20 * time.Millisecond)
					}()
					if how == "panic" {
						panic("handler bug")
					}
					runtime.Goexit()
					return nil
				},
			})
			cl, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			cl.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := cl.Write([]byte("a")); err != nil {
				t.Fatal(err)
			}
			if err := <-replied; err != nil {
				t.Fatalf("Flush of the held reply after OnRequest's %s: %v", how, err)
			}
			got := make([]byte, 5)
			if _, err := io.ReadFull(cl, got); err != nil || string(got) != "reply" {
				t.Fatalf("peer read %q, %v; want the held reply", got, err)
			}
			cl.Write([]byte("b")) // not served: the reader is gone
			close(sentMore)
			if n, err := cl.Read(got); err == nil {
				t.Fatalf("peer read %q after the reply, want the connection closed", got[:n])
			}
			if n := calls.Load(); n != 1 {
				t.Fatalf("OnRequest ran %d times, want once", n)
			}
		})
	}
}
