package server_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// slowDecodeArgs decodes slowly (large arguments, say): FastRead tells decoding
// and returns once release is closed.
type slowDecodeArgs struct {
	decoding chan struct{}
	release  chan struct{}
}

func (*slowDecodeArgs) BLength() int           { return 1 }
func (*slowDecodeArgs) FastWrite(b []byte) int { b[0] = 0; return 1 }
func (a *slowDecodeArgs) FastRead(b []byte) (int, error) {
	close(a.decoding)
	<-a.release
	return len(b), nil
}

// TestStopWaitsForHandlerReadLate: a TTHeader request whose arguments
// are still being decoded when the exit wait time ends has its handler
// submitted to the server's pool after Stop has shut the pool down; the
// pool runs it on a goroutine of its own that Pool.Shutdown does not wait
// for, so Stop(context.Background()) returns nil while that handler still
// runs, although its doc says it waits for handlers still running as long
// as ctx allows.
func TestStopWaitsForHandlerReadLate(t *testing.T) {
	decoding, releaseDecode := make(chan struct{}), make(chan struct{})
	handlerStarted, releaseHandler, handlerDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	info := serviceInfo("Slow",
		method("echo", func() thrift.FastCodec { return &slowDecodeArgs{decoding: decoding, release: releaseDecode} }, nil,
			func(args, result thrift.FastCodec) error {
				defer close(handlerDone)
				close(handlerStarted)
				<-releaseHandler
				return nil
			}))
	s := server.New(server.WithExitWaitTime(50 * time.Millisecond))
	if err := s.RegisterService(info, struct{}{}); err != nil {
		t.Fatal(err)
	}
	addr, served := listenServe(t, s)
	c := dial(t, addr, transport.TTHeader)
	if err := c.send("echo", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{}}, nil); err != nil {
		t.Fatal(err)
	}
	<-decoding
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop(context.Background()) }()
	time.Sleep(200 * time.Millisecond) // past the exit wait: Stop waits in pool.Shutdown
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned %v while the reader was still decoding", err)
	default:
	}
	close(releaseDecode)
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case <-handlerStarted:
	case <-timer.C:
		t.Fatal("handler never started")
	}
	defer func() {
		close(releaseHandler)
		<-handlerDone
		timer.Reset(5 * time.Second)
		select {
		case <-stopped:
		case <-timer.C:
			t.Error("Stop did not return once the handler had")
		}
		<-served
	}()
	wait := time.NewTimer(300 * time.Millisecond)
	defer wait.Stop()
	select {
	case err := <-stopped:
		t.Fatalf("Stop(context.Background()) returned %v while a handler was still running (InFlight %d)", err, s.Stats().InFlight)
	case <-wait.C: // Stop still waits, as documented
	}
}

func listenServe(t *testing.T, s *server.Server) (string, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	return ln.Addr().String(), served
}
