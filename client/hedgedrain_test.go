package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/retry"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// TestHedgedCallsKeepDrainRepick: Call's doc says a request refused
// by a server that is shutting down is sent to another instance "whatever
// the retry policy". Every attempt of a method with a BackupDelay is
// forked, the first included, and invoke leaves that re-pick for forked
// attempts to the retry middleware, whose relaunch took budget: so
// during a rolling restart the method with backup requests failed calls
// that the same method without them did not.
func TestHedgedCallsKeepDrainRepick(t *testing.T) {
	srvA, a := startPetrel(t)
	_, b := startPetrel(t)
	mk := func(backup time.Duration) (*client.Client, *alternating) {
		lb := &alternating{}
		r := newRetryer(t, retry.Config{Methods: map[string]retry.Policy{
			"echo": {MaxAttempts: 2, Idempotent: true, BackupDelay: backup},
		}}) // default budget
		c, err := client.New("Echo", client.WithHostPorts(a, b), client.WithLoadBalancer(lb),
			client.WithRetry(r), client.WithRPCTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		for range 4 { // connections to both
			if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
				t.Fatal(err)
			}
		}
		return c, lb
	}
	plain, plainLB := mk(0)
	hedged, hedgedLB := mk(time.Second)
	// A call in flight on A (another client) keeps A draining.
	hold := newClient(t, a, setups()[1])
	held := make(chan error, 1)
	go func() {
		_, err := echo(context.Background(), hold, &echoArgs{SleepMs: 1500})
		held <- err
	}()
	time.Sleep(50 * time.Millisecond)
	stopped := stopLater(srvA)
	time.Sleep(30 * time.Millisecond)
	count := func(c *client.Client) (failed int, last error) {
		for range 40 {
			if _, err := echo(context.Background(), c, &echoArgs{}); err != nil {
				failed++
				last = err
			}
		}
		return
	}
	pf, perr := count(plain)
	hf, herr := count(hedged)
	t.Logf("without backups: %d/40 failed (refusals %d, last %v)", pf, plainLB.refused.Load(), perr)
	t.Logf("with backups:    %d/40 failed (refusals %d, last %v)", hf, hedgedLB.refused.Load(), herr)
	if plainLB.refused.Load() == 0 || hedgedLB.refused.Load() == 0 {
		t.Fatal("no call reached the draining server: the test did not exercise the path")
	}
	if hf > pf {
		t.Errorf("%d calls of the method with backup requests failed (%v) while A drained, %d without: the drain re-pick is lost", hf, rpcerr.CodeOf(herr), pf)
	}
	<-held
	<-stopped
}
