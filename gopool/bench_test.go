package gopool_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/petrel-rpc/petrel/gopool"
)

// The benchmarks compare Pool.Go with a goroutine per task (go f()) and with a
// naive channel-fed pool. Each submitting goroutine (one per GOMAXPROCS; run
// with -cpu 1,2) submits a pre-built func that calls WaitGroup.Done, so the
// closure is not counted, and after every batch of tasks waits for them, the
// way an event loop hands out the requests of one poll and then polls again.
// batch=1 is a ping-pong: submit one task, wait for it.

var batches = []int{1, 16, 256}

func benchSubmit(b *testing.B, submit func(func())) {
	for _, batch := range batches {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var wg sync.WaitGroup
				f := wg.Done
				n := 0
				for pb.Next() {
					wg.Add(1)
					submit(f)
					if n++; n == batch {
						wg.Wait()
						n = 0
					}
				}
				wg.Wait()
			})
		})
	}
}

func BenchmarkPoolGo(b *testing.B) {
	p, err := gopool.New(gopool.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchSubmit(b, p.Go)
}

// BenchmarkPoolGoSaturated has 2 workers, so most tasks of a batch go through
// the queue.
func BenchmarkPoolGoSaturated(b *testing.B) {
	p, err := gopool.New(gopool.Config{MaxWorkers: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchSubmit(b, p.Go)
}

func BenchmarkPoolCtxGo(b *testing.B) {
	p, err := gopool.New(gopool.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	benchSubmit(b, func(f func()) { p.CtxGo(ctx, f) })
}

func BenchmarkGoStatement(b *testing.B) {
	benchSubmit(b, func(f func()) { go f() })
}

// chanPool is the naive pool: a fixed set of goroutines reading a buffered
// channel.
type chanPool struct {
	tasks chan func()
	wg    sync.WaitGroup
}

func newChanPool(workers, queue int) *chanPool {
	c := &chanPool{tasks: make(chan func(), queue)}
	c.wg.Add(workers)
	for range workers {
		go func() {
			defer c.wg.Done()
			for f := range c.tasks {
				f()
			}
		}()
	}
	return c
}

func (c *chanPool) Go(f func()) { c.tasks <- f }

func (c *chanPool) Close() { close(c.tasks); c.wg.Wait() }

func BenchmarkChanPool(b *testing.B) {
	c := newChanPool(256, 1024)
	defer c.Close()
	benchSubmit(b, c.Go)
}

// deepStack uses about 32 KiB of stack, like a handler that decodes a nested
// message: a fresh goroutine must grow (copy) its stack for it, a pooled
// worker keeps the grown stack.
//
//go:noinline
func deepStack(depth int) byte {
	var frame [512]byte
	frame[depth%len(frame)] = byte(depth)
	if depth == 0 {
		return frame[0]
	}
	return deepStack(depth-1) + frame[depth%len(frame)]
}

var sink atomicByte

type atomicByte struct {
	mu sync.Mutex
	b  byte
}

func benchDeep(b *testing.B, submit func(func())) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var wg sync.WaitGroup
		f := func() {
			v := deepStack(64)
			sink.mu.Lock()
			sink.b += v
			sink.mu.Unlock()
			wg.Done()
		}
		n := 0
		for pb.Next() {
			wg.Add(1)
			submit(f)
			if n++; n == 16 {
				wg.Wait()
				n = 0
			}
		}
		wg.Wait()
	})
}

func BenchmarkDeepStackPoolGo(b *testing.B) {
	p, err := gopool.New(gopool.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchDeep(b, p.Go)
}

func BenchmarkDeepStackGoStatement(b *testing.B) {
	benchDeep(b, func(f func()) { go f() })
}

func BenchmarkDeepStackChanPool(b *testing.B) {
	c := newChanPool(256, 1024)
	defer c.Close()
	benchDeep(b, c.Go)
}
