package server_test

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

// TestPipelinedTTHeaderBytesBounded: one TTHeader connection, default
// options, a handler that takes its time, 400 pipelined requests of 1 MiB.
// Each request read is copied out of the connection's input into its
// arguments, so the input cap never fills and pushes back; the server
// bounds the bytes of a connection's calls in flight too, and the reader
// then serves requests itself (past 256 MiB). Bounded by count (1024)
// alone, the server held 400 MiB for the connection, and 1024 requests of the default
// WithMaxMessageSize (16 MiB) would have held 16 GiB.
func TestPipelinedTTHeaderBytesBounded(t *testing.T) {
	const n = 400
	const size = 1 << 20
	impl := &countingBlocker{release: make(chan struct{})}
	_, addr := startWith(t, server.New(), impl)
	released := false
	defer func() {
		if !released {
			close(impl.release)
		}
	}()
	var m0 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := requestBytes(t, transport.TTHeader, 1, strings.Repeat("p", size))
	go func() {
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		for i := 0; i < n; i++ {
			if _, err := c.Write(req); err != nil {
				return
			}
		}
	}()
	// Until the handlers started stop growing in number.
	for last := int64(-1); ; {
		time.Sleep(200 * time.Millisecond)
		now := impl.running.Load()
		if now == last || now == n {
			break
		}
		last = now
	}
	var m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m1)
	held := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	t.Logf("%d calls of %d KiB in flight on one connection: heap +%d MiB", impl.running.Load(), size>>10, held>>20)
	close(impl.release)
	released = true
	if held > 330<<20 { // the 256 MiB bound, the input and a call served by the reader
		t.Fatalf("one connection's pipelined requests hold %d MiB of the server's memory (%d calls in flight), with a 4 MiB input cap", held>>20, n)
	}
}
