package server_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// goexitResult is a result whose encoding calls runtime.Goexit, as a
// hand-written codec or a test double calling t.FailNow would.
type goexitResult struct{}

func (goexitResult) BLength() int                   { return 1 }
func (goexitResult) FastWrite(b []byte) int         { runtime.Goexit(); return 0 }
func (goexitResult) FastRead(b []byte) (int, error) { return 0, nil }

// TestReplyCodecGoexit: a reply codec that ends its goroutine with
// runtime.Goexit does not leave the connection's write lock held: the
// connection is closed (its stream may hold part of the reply), the other
// calls in flight on it do not wait for ever to write their replies, and
// Stop returns at once.
func TestReplyCodecGoexit(t *testing.T) {
	info := serviceInfo("Goexit",
		method("exit", nil, func() thrift.FastCodec { return goexitResult{} }, nil),
		method("slow", nil, nil, func(args, result thrift.FastCodec) error {
			time.Sleep(100 * time.Millisecond)
			return nil
		}))
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			s := server.New()
			addr, stop := serveInfo(t, s, info)
			c := dial(t, addr, p)
			c.conn.SetReadTimeout(3 * time.Second)
			if p == transport.TTHeader {
				if err := c.send("slow", thrift.CALL, 1, echotest.NewEchoEchoArgs(), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.send("exit", thrift.CALL, 2, echotest.NewEchoEchoArgs(), nil); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for {
				if _, err := c.recv(nil); err != nil {
					break
				}
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the connection was left open (the read gave up after %v)", d)
			}
			stop(2 * time.Second)
		})
	}
}
