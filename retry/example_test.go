package retry_test

import (
	"context"
	"fmt"

	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/rpcinfo"
)

func ExampleRetryer() {
	r, err := retry.New(retry.Config{
		// Methods not listed: only failures that provably did not reach
		// the server are retried, once.
		Methods: map[string]retry.Policy{
			"getUser": {MaxAttempts: 3, Idempotent: true},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// With Petrel's client: client.New(service, client.WithRetry(r), ...).
	// Here the middleware wraps an endpoint that fails twice.
	attempts := 0
	ep := r.Middleware(nil)(func(ctx context.Context, req, resp any) error {
		attempts++
		if attempts < 3 {
			return rpcerr.New(rpcerr.Connection, "connection reset by peer")
		}
		return nil
	})
	ctx := rpcinfo.NewContext(context.Background(), &rpcinfo.RPCInfo{Method: "getUser"})
	err = ep(ctx, nil, nil)
	fmt.Println(attempts, err)
	// Output: 3 <nil>
}
