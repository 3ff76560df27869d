//go:build linux

package netpoll_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// BenchmarkConnectEcho: one short connection per operation (dial, a 64-byte
// echo, close), as a short-connection pool makes them; it measures what
// accepting and setting up a connection costs the loop.
func BenchmarkConnectEcho(b *testing.B) {
	_, addr := serve(b, netpoll.Config{OnRequest: echo})
	msg := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		c, err := netpoll.DialConnection("tcp", addr, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		w := c.Writer()
		p, _ := w.Malloc(len(msg))
		copy(p, msg)
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Reader().Next(len(msg)); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkConnectEchoGoNet is BenchmarkConnectEcho with the standard
// library's dialer and connection as the client, for comparison.
func BenchmarkConnectEchoGoNet(b *testing.B) {
	_, addr := serve(b, netpoll.Config{OnRequest: echo})
	msg := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, msg); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
