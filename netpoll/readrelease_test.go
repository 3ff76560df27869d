//go:build linux

package netpoll

import (
	"io"
	"runtime"
	"testing"
	"time"
)

// TestReadAfterPeekReleases: with 4067463 Read released nothing
// once a Peek/Next/Until slice was taken, until an explicit Release. A dialed
// connection used as a net.Conn after one protocol-sniffing Peek (then
// io.Copy, which only calls Read) kept every byte the peer ever sent: the
// input's memory grew with the stream, unbounded, though Len() stayed ~0.
// Read releases again (its doc says slices taken before stop being valid).
func TestReadAfterPeekReleases(t *testing.T) {
	c, peer := dialPair(t)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	peer.Write([]byte("H"))
	if _, err := c.Peek(1); err != nil { // sniff the first byte
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	base := int(ms0.HeapAlloc)
	const total = 16 << 20
	go func() {
		chunk := make([]byte, 64<<10)
		for sent := 0; sent < total; sent += len(chunk) {
			if _, err := peer.Write(chunk); err != nil {
				return
			}
		}
	}()
	p := make([]byte, 64<<10)
	got := 0
	for got < total+1 {
		n, err := c.Read(p)
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		got += n
	}
	// Heap still live once the pools are emptied by two collections.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	held := int(ms.HeapAlloc) - base
	t.Logf("read %d bytes, Len %d, live heap grew by %d bytes", got, c.Len(), held)
	if held > 4<<20 {
		t.Fatalf("after reading %d MiB with Read (Len %d), the live heap is %d MiB larger: Read never releases after one Peek",
			got>>20, c.Len(), held>>20)
	}
}
