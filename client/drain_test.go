package client_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/loadbalance"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
)

// alternating picks its instances in turn and counts the picks refused with
// ShuttingDown.
type alternating struct {
	mu      sync.Mutex
	list    []discovery.Instance
	next    int
	refused atomic.Int64
}

func (b *alternating) Update(list []discovery.Instance) {
	b.mu.Lock()
	b.list = append([]discovery.Instance(nil), list...)
	b.mu.Unlock()
}

func (b *alternating) Pick(context.Context, string) (discovery.Instance, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.list) == 0 {
		return discovery.Instance{}, loadbalance.ErrNoInstance
	}
	in := b.list[b.next%len(b.list)]
	b.next++
	return in, nil
}

func (b *alternating) Done(_ string, _ time.Duration, err error) {
	if rpcerr.CodeOf(err) == rpcerr.ShuttingDown {
		b.refused.Add(1)
	}
}

// TestShuttingDownInstanceIsSkipped: calls that reach a server while it
// drains are refused there before they run, and the client sends them to
// another instance, whatever its retry policy: a rolling restart loses no
// call.
func TestShuttingDownInstanceIsSkipped(t *testing.T) {
	for _, s := range ttheaderSetups() {
		if s.name[:5] == "short" {
			continue // a drained server accepts no new connection: nothing reaches it
		}
		t.Run(s.name, func(t *testing.T) {
			srvA, a := startPetrel(t)
			_, b := startPetrel(t)
			lb := &alternating{}
			c, err := client.New("Echo", client.WithHostPorts(a, b), client.WithTransport(s.proto), s.pool,
				client.WithLoadBalancer(lb), client.WithRPCTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			for range 4 { // connections to both
				if _, err := echo(ctx, c, &echoArgs{}); err != nil {
					t.Fatal(err)
				}
			}
			// A call in flight on A keeps it draining for 300 ms.
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					lb.mu.Lock()
					onA := lb.list[lb.next%2].Address == a
					lb.mu.Unlock()
					if onA {
						break
					}
					echo(ctx, c, &echoArgs{})
				}
				if _, err := echo(ctx, c, &echoArgs{SleepMs: 300}); err != nil {
					t.Errorf("the call in flight during Stop: %v", err)
				}
			})
			time.Sleep(50 * time.Millisecond)
			stopped := stopLater(srvA)
			time.Sleep(20 * time.Millisecond)
			for i := range 20 {
				if _, err := echo(ctx, c, &echoArgs{}); err != nil {
					t.Fatalf("call %d while A drains: %v", i, err)
				}
			}
			wg.Wait()
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			if lb.refused.Load() == 0 {
				t.Fatal("no call reached the draining server: the test did not exercise the path")
			}
			t.Logf("%d calls refused by the draining server were sent to the other", lb.refused.Load())
		})
	}
}

// TestBackupRefusedIsNotSentAgain: a backup request refused by a server
// that is shutting down is not sent to another instance by the attempt
// itself, as a plain call's refusal is: once the backup's request was
// written the call may return (its winner answered) and the caller reuse
// the request, so the attempt must not read it again. (It was sent again,
// here to A, which then got the call twice.)
func TestBackupRefusedIsNotSentAgain(t *testing.T) {
	srvA, a := startPetrel(t)
	srvB, b := startPetrel(t)
	lb := &alternating{}
	r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{
		"echo": {MaxAttempts: 2, Idempotent: true, BackupDelay: 20 * time.Millisecond},
	}})
	c, err := client.New("Echo", client.WithHostPorts(a, b), client.WithLoadBalancer(lb),
		client.WithRetry(r), client.WithRPCTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for range 2 { // a connection to each: A, then B
		if _, err := echo(ctx, c, &echoArgs{}); err != nil {
			t.Fatal(err)
		}
	}
	// A call in flight on B (from another client) keeps B draining.
	hold := newClient(t, b, setups()[1])
	held := make(chan error, 1)
	go func() {
		_, err := echo(ctx, hold, &echoArgs{SleepMs: 600})
		held <- err
	}()
	time.Sleep(50 * time.Millisecond)
	stopped := stopLater(srvB)
	time.Sleep(30 * time.Millisecond)
	before := srvA.Stats().Requests
	// The call goes to A (slow), its backup to B, which refuses it.
	if _, err := echo(ctx, c, &echoArgs{SleepMs: 150}); err != nil {
		t.Fatal(err)
	}
	if refused := lb.refused.Load(); refused != 1 {
		t.Fatalf("%d refusals by B, want 1: the test did not exercise the path", refused)
	}
	time.Sleep(200 * time.Millisecond) // a request sent again would have reached A by now
	if n := srvA.Stats().Requests - before; n != 1 {
		t.Fatalf("A got %d requests of the call, want 1: the refused backup was sent again", n)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// stopLater starts srv's Stop (within 5 s) and returns what it will return.
func stopLater(srv *server.Server) <-chan error {
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Stop(ctx)
	}()
	return stopped
}
