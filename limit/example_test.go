package limit_test

import (
	"fmt"

	"github.com/petrel-rpc/petrel/limit"
)

// A server admits requests with AcquireRequest and releases them when
// answered; a refusal names the limit and carries rpcerr.Overloaded.
func ExampleLimiter() {
	l, err := limit.New(limit.Config{MaxInFlight: 1}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.AcquireRequest(0))
	r := l.AcquireRequest(0)
	fmt.Println(r, r.Err(l.Limit(r)))
	l.ReleaseRequest()
	fmt.Println(l.AcquireRequest(0))
	// Output:
	// none
	// in_flight petrel: overloaded: server is overloaded: more than 1 requests in flight (WithMaxInFlight)
	// none
}
