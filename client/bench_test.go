package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// The benchmarks call the test server in a child process over loopback, so
// that -benchmem counts the client's allocations only (the client's mux
// reader goroutine included). The argument and result structs are made once
// per benchmark and decode into reused byte slices: they allocate nothing
// per call, so allocs/op is the client path's own. The clients send an
// IDL service name, as generated clients do.

func benchSetups() []setup {
	return []setup{
		{"long/ttheader", transport.TTHeader, client.WithLongConnection(client.LongPoolConfig{})},
		{"long/framed", transport.Framed, client.WithLongConnection(client.LongPoolConfig{})},
		{"long/buffered", transport.Buffered, client.WithLongConnection(client.LongPoolConfig{})},
		{"mux/ttheader", transport.TTHeader, client.WithMuxConnection(0)},
	}
}

func BenchmarkCall(b *testing.B) {
	for _, kind := range []string{"test", "petrel"} {
		b.Run(kind, func(b *testing.B) { benchCall(b, kind) })
	}
}

func benchCall(b *testing.B, kind string) {
	addr := startServerProcess(b, kind)
	for _, s := range benchSetups() {
		b.Run(s.name, func(b *testing.B) {
			c := newClient(b, addr, s, client.WithIDLServiceName("Echo"))
			args := &echoArgs{Msg: []byte("hello, petrel")}
			res := &echoResult{Success: make([]byte, 0, 64)}
			ctx := context.Background()
			for range 100 { // warm pools, maps and buffers
				if err := c.Call(ctx, "echo", false, args, res); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := c.Call(ctx, "echo", false, args, res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCallParallel(b *testing.B) {
	for _, kind := range []string{"test", "petrel"} {
		b.Run(kind, func(b *testing.B) { benchCallParallel(b, kind) })
	}
}

func benchCallParallel(b *testing.B, kind string) {
	addr := startServerProcess(b, kind)
	for _, s := range benchSetups() {
		if s.proto == transport.Buffered {
			continue
		}
		b.Run(s.name, func(b *testing.B) {
			c := newClient(b, addr, s, client.WithIDLServiceName("Echo"))
			b.ReportAllocs()
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				args := &echoArgs{Msg: []byte("hello, petrel")}
				res := &echoResult{Success: make([]byte, 0, 64)}
				ctx := context.Background()
				for pb.Next() {
					if err := c.Call(ctx, "echo", false, args, res); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCallVariants measures what a per-call timeout and a cancelable
// context cost on top of a plain call (test server in a child process).
func BenchmarkCallVariants(b *testing.B) {
	addr := startServerProcess(b, "test")
	for _, s := range []setup{benchSetups()[0], benchSetups()[3]} {
		c := newClient(b, addr, s, client.WithIDLServiceName("Echo"))
		args := &echoArgs{Msg: []byte("hello, petrel")}
		res := &echoResult{Success: make([]byte, 0, 64)}
		timeout := 500 * time.Millisecond
		b.Run(s.name+"/call-timeout", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Call(context.Background(), "echo", false, args, res, client.WithCallTimeout(timeout)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.name+"/cancelable-ctx", func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Call(ctx, "echo", false, args, res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
