package gopool_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/petrel-rpc/petrel/gopool"
)

func Example() {
	p, err := gopool.New(gopool.Config{
		MaxWorkers: 4,
		PanicHandler: func(ctx context.Context, recovered any, stack []byte) {
			fmt.Println("recovered:", recovered)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	var mu sync.Mutex
	sum := 0
	var wg sync.WaitGroup
	for i := 1; i <= 100; i++ {
		wg.Add(1)
		p.Go(func() {
			defer wg.Done()
			mu.Lock()
			sum += i
			mu.Unlock()
		})
	}
	wg.Wait()
	fmt.Println("sum:", sum)

	wg.Add(1)
	p.Go(func() { defer wg.Done(); panic("task failed") })
	wg.Wait()

	_ = p.Close() // waits for running tasks; idle workers exit
	fmt.Println(p.Submit(context.Background(), func() {}))
	// Output:
	// sum: 5050
	// recovered: task failed
	// gopool: pool is closed
}
