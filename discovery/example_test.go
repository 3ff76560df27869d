package discovery_test

import (
	"context"
	"fmt"

	"github.com/petrel-rpc/petrel/discovery"
)

func ExampleStatic() {
	r := discovery.NewStaticAddrs("10.0.0.1:8888", "10.0.0.2:8888")
	w, _ := r.Watch(context.Background(), "Echo")
	defer w.Close()
	list, _ := w.Next(context.Background())
	fmt.Println(len(list), list[0].Address, list[0].EffectiveWeight())

	r.Set(discovery.Instance{Address: "10.0.0.3:8888", Weight: 5})
	list, _ = w.Next(context.Background())
	fmt.Println(len(list), list[0].Address, list[0].EffectiveWeight())
	// Output:
	// 2 10.0.0.1:8888 10
	// 1 10.0.0.3:8888 5
}
