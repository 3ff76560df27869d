package client_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/loadbalance"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
)

// TestHandlerErrorIsNoRefusal: a handler of the non-idempotent "put" runs
// (its side effects done) and then returns an error it got from a
// downstream call, whose code is ShuttingDown. The server marks it as the
// handler's, so the client does not take the reply for a refusal and send
// the put again (it did: 3 runs with a retry policy, 2839 between two
// instances without one). The same holds when the downstream refusal is
// passed on as the ApplicationException it arrived as, which the server
// forwarded verbatim (3 runs with a retry policy, 2 between two instances).
func TestHandlerErrorIsNoRefusal(t *testing.T) {
	downstream := map[string]error{
		"rpcerr": rpcerr.New(rpcerr.ShuttingDown, "server is shutting down"),
		// what a Petrel client returns when its server refused: the refusal
		// arrived as an ApplicationException, which the error wraps (the
		// server used to forward it verbatim, refusal text and all)
		"forwarded-exception": rpcerr.Wrap(rpcerr.ShuttingDown,
			thrift.NewApplicationException(thrift.ExceptionInternalError, "petrel: shutting_down: server is shutting down"),
			"the server answered with an exception"),
		"bare-exception": thrift.NewApplicationException(thrift.ExceptionInternalError, "petrel: overloaded: too many requests in flight"),
	}
	for name, herr := range downstream {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			handler := func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
				calls.Add(1)
				return herr // the handler's own downstream call failed and it returns err
			}
			addr := startGov(t, handler)
			t.Run("with-retry", func(t *testing.T) {
				calls.Store(0)
				r := newRetryer(t, govPolicies(retry.BudgetConfig{Ratio: 1, MinRetries: 100}))
				c := newGovClient(t, client.WithHostPorts(addr), client.WithRetry(r))
				err := c.Call(context.Background(), "put", false, &echoArgs{}, new(echoResult))
				if n := calls.Load(); n != 1 {
					t.Fatalf("non-idempotent put: handler ran %d times (err %v), want 1", n, err)
				}
				if code := rpcerr.CodeOf(err); code != rpcerr.Application {
					t.Fatalf("code %v (err %v), want Application: the handler failed, the server refused nothing", code, err)
				}
			})
			t.Run("no-retry-two-instances", func(t *testing.T) {
				calls.Store(0)
				addr2 := startGov(t, handler)
				c := newGovClient(t, client.WithHostPorts(addr, addr2))
				err := c.Call(context.Background(), "put", false, &echoArgs{}, new(echoResult))
				if n := calls.Load(); n != 1 {
					t.Fatalf("put without any retry policy: handlers ran %d times (err %v), want 1", n, err)
				}
			})
		})
	}
}

// slowPickBalancer is P2C whose Pick takes longer than the call's timeout
// (standing in for a pick that happens just before the deadline).
type slowPickBalancer struct {
	countingBalancer
	picks atomic.Int64
}

func (b *slowPickBalancer) Pick(ctx context.Context, key string) (discovery.Instance, error) {
	b.picks.Add(1)
	time.Sleep(30 * time.Millisecond)
	return b.P2C.Pick(ctx, key)
}

// TestEveryPickIsDone: the deadline passes while the balancer picks; the
// balancer is still told the pick's outcome (before, invoke returned the
// timeout without Done, and P2C's in-flight count of the instance stayed
// raised for good).
func TestEveryPickIsDone(t *testing.T) {
	_, a1 := startPetrel(t)
	p2c, err := loadbalance.NewP2C(loadbalance.P2CConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lb := &slowPickBalancer{countingBalancer: countingBalancer{P2C: p2c}}
	c, err := client.New("Echo", client.WithHostPorts(a1), client.WithLoadBalancer(lb), client.WithRPCTimeout(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = echo(context.Background(), c, &echoArgs{})
	if p, d := lb.picks.Load(), lb.done.Load(); p != d {
		t.Fatalf("%d Pick, %d Done (call error: %v): the instance's in-flight count leaks", p, d, err)
	}
}

// TestRefusedCallNotBouncedBetweenDrainingServers: two instances drain at
// once (a rolling restart stops them together). A refused call goes to
// another instance, never back to one that refused it, and at most
// drainPicks times (it went back and forth 543 times until its deadline).
func TestRefusedCallNotBouncedBetweenDrainingServers(t *testing.T) {
	var srvs []*server.Server
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := server.New(server.WithListener(ln), server.WithExitWaitTime(2*time.Second))
		if err := s.RegisterService(govServiceInfo, &govHandler{fn: func(ctx context.Context, method string, a *echoArgs, r *echoResult) error {
			r.Success, r.HasSuccess = a.Msg, true
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Run() }()
		t.Cleanup(func() { <-done })
		srvs, addrs = append(srvs, s), append(addrs, ln.Addr().String())
	}
	c := newGovClient(t, client.WithHostPorts(addrs...), client.WithMuxConnection(1), client.WithRPCTimeout(200*time.Millisecond))
	for range 4 { // connect to both
		if err := c.Call(context.Background(), "get", false, &echoArgs{}, new(echoResult)); err != nil {
			t.Fatal(err)
		}
	}
	stopped := make(chan struct{})
	for _, s := range srvs {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			s.Stop(ctx)
			stopped <- struct{}{}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	err := c.Call(context.Background(), "put", false, &echoArgs{}, new(echoResult))
	var rejected int64
	for _, s := range srvs {
		rejected += s.Stats().RejectedShuttingDown
	}
	<-stopped
	<-stopped
	if rejected > 4 {
		t.Fatalf("one call was sent %d times to draining servers (err %v)", rejected, err)
	}
}
