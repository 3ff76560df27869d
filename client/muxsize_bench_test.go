package client_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/petrel-rpc/petrel/client"
)

// BenchmarkMuxConnections compares mux pool sizes with 64 concurrent
// callers against Petrel's server in a child process.
func BenchmarkMuxConnections(b *testing.B) {
	addr := startServerProcess(b, "petrel")
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			c := muxClient(b, addr, n)
			b.ReportAllocs()
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				args := &echoArgs{Msg: []byte("hello, petrel")}
				res := &echoResult{Success: make([]byte, 0, 64)}
				for pb.Next() {
					if err := c.Call(context.Background(), "echo", false, args, res); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if sends, flushes := client.MuxWrites(c); flushes > 0 {
				b.ReportMetric(float64(sends)/float64(flushes), "req/flush")
			}
		})
	}
}
