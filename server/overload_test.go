package server_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
)

// TestOverloadGoodput offers twice the server's capacity and checks that
// the server keeps serving at (nearly) its capacity while it rejects the
// excess at once with rpcerr.Overloaded.
//
// Capacity is known by construction: every request takes a fixed service
// time (the handler sleeps) and WithMaxInFlight bounds the requests served
// at once, so capacity = inFlight / service requests per second. Requests
// are offered open-loop at a fixed rate (a new caller per request, on a
// schedule that does not wait for replies), as a fleet of clients would.
//
// Each rejection is timed twice. In the server, from the request read to
// its rejection written (flushed): every one must take at most 1 ms (the
// 99th percentile under the race detector). At
// the client, from Call to its error: that also holds the client's write,
// the wake-up of the server's reader and of the client's, and goroutine
// scheduling on both sides; its 99th percentile must be at most 1 ms (the
// 90th under the race detector). On this 2-core machine other processes
// run at the same time, and a thread they preempt stalls whatever it was
// doing for a millisecond or more: a round disturbed so is run again, up
// to 3 rounds; the test fails when none meets the bounds.
//
// Under the race detector, which make test runs with other packages' tests
// on the same 2 cores, a round's timing depends on that load more than on
// the server: the bounds there only tell a rejection from a call served
// (the server rejects within half a service time, the client's median
// rejection comes before its median served call) and a server that keeps
// serving from one that collapses (a quarter of the capacity). make test runs
// this test again, alone and without the race detector, with the 1 ms
// bounds and 80% of the capacity.
func TestOverloadGoodput(t *testing.T) {
	const inFlight = 8
	s := server.New(server.WithMaxInFlight(inFlight))
	var timed rejectionTimes
	s.TimeRejections(timed.add)
	_, addr := startWith(t, s, &handler{notified: make(chan string, 16)})
	cli, err := echotest.NewEchoClient("Echo", client.WithHostPorts(addr), client.WithMuxConnection(2), client.WithRPCTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// Warm the connections up.
	if _, err := cli.Echo(context.Background(), &echotest.Request{Action: "echo", Msg: "warm"}); err != nil {
		t.Fatal(err)
	}
	var problems []string
	for round := 1; round <= 3; round++ {
		problems = overloadRound(t, s, cli, inFlight, &timed)
		if len(problems) == 0 {
			return
		}
		t.Logf("round %d: %s", round, strings.Join(problems, "; "))
	}
	t.Errorf("no round of 3 met the bounds; the last: %s", strings.Join(problems, "; "))
}

// rejectionTimes collects the server's times of its rejections.
type rejectionTimes struct {
	mu sync.Mutex
	d  []time.Duration // guarded by mu
}

func (r *rejectionTimes) add(d time.Duration) {
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

// take returns the times collected and starts anew.
func (r *rejectionTimes) take() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.d
	r.d = nil
	return d
}

// percentile returns the p-th quantile of sorted d (0 when empty).
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

// overloadRound offers twice the capacity for 1.5 s and returns what was
// out of bounds.
func overloadRound(t *testing.T, s *server.Server, cli echotest.EchoClient, inFlight int, timed *rejectionTimes) (problems []string) {
	const (
		service  = 10 * time.Millisecond
		duration = 1500 * time.Millisecond
	)
	capacity := float64(inFlight) / service.Seconds() // requests per second
	offered := 2 * capacity
	var (
		mu       sync.Mutex
		ok       int
		served   []time.Duration // client-side latency of each served call
		rejected []time.Duration // client-side latency of each rejection
		other    []error
		wg       sync.WaitGroup
	)
	req := &echotest.Request{Action: "sleep", Msg: service.String()}
	interval := time.Duration(float64(time.Second) / offered)
	n := int(duration / interval)
	rejectedBefore := s.Stats().RejectedInFlight
	timed.take()
	start := time.Now()
	for i := 0; i < n; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			_, err := cli.Echo(context.Background(), req)
			lat := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
				served = append(served, lat)
			case rpcerr.CodeOf(err) == rpcerr.Overloaded:
				rejected = append(rejected, lat)
			default:
				other = append(other, err)
			}
		}()
	}
	offerTime := time.Since(start)
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("%d calls failed other than overloaded, first: %v", len(other), other[0])
	}
	atServer := timed.take()
	slices.Sort(rejected)
	slices.Sort(served)
	slices.Sort(atServer)
	// Admitted requests finish at most one service time after the offer
	// ends; goodput is over the offer's duration.
	goodput := float64(ok) / offerTime.Seconds()
	serverRejected := s.Stats().RejectedInFlight - rejectedBefore
	t.Logf("capacity %.0f/s, offered %d requests in %v (%.0f/s): %d served (goodput %.0f/s = %.0f%% of capacity), %d rejected (server counted %d)",
		capacity, n, offerTime.Round(time.Millisecond), float64(n)/offerTime.Seconds(), ok, goodput, 100*goodput/capacity, len(rejected), serverRejected)
	t.Logf("rejection time in the server, read to written: p50 %v p99 %v max %v",
		percentile(atServer, 0.5), percentile(atServer, 0.99), percentile(atServer, 1))
	t.Logf("rejection latency at the client: p50 %v p90 %v p99 %v max %v",
		percentile(rejected, 0.5), percentile(rejected, 0.9), percentile(rejected, 0.99), percentile(rejected, 1))
	t.Logf("served latency at the client: p50 %v p90 %v", percentile(served, 0.5), percentile(served, 0.9))
	if int64(len(rejected)) != serverRejected || len(atServer) != len(rejected) {
		t.Fatalf("client saw %d rejections, server counted %d and timed %d", len(rejected), serverRejected, len(atServer))
	}
	if goodput > 1.1*capacity {
		t.Fatalf("goodput %.0f/s is over the capacity %.0f/s: the in-flight bound did not hold", goodput, capacity)
	}
	floor := 0.8
	if raceEnabled {
		floor = 0.25
	}
	if goodput < floor*capacity {
		problems = append(problems, fmt.Sprintf("goodput %.0f/s is under %.0f%% of the capacity %.0f/s", goodput, 100*floor, capacity))
	}
	if len(rejected) < n/4 {
		problems = append(problems, fmt.Sprintf("only %d of %d requests rejected at twice the capacity", len(rejected), n))
	}
	if raceEnabled {
		// Under the race detector, with other packages' tests running on
		// the same 2 cores, a rejection now and then waits for a core; the
		// bound on each is asserted without it (make test runs this test
		// again so, alone). Here a rejection must not have waited for a
		// handler's service time.
		if p := percentile(atServer, 0.99); p > service/2 {
			problems = append(problems, fmt.Sprintf("p99 rejection time in the server %v is over %v", p, service/2))
		}
	} else if slow := len(atServer) - sort.Search(len(atServer), func(i int) bool { return atServer[i] > time.Millisecond }); slow > 0 {
		problems = append(problems, fmt.Sprintf("%d rejections took over 1 ms in the server (the slowest %v)", slow, percentile(atServer, 1)))
	}
	if raceEnabled {
		// Under the race detector every step costs several times more,
		// and the load of the other tests comes on top: rejections must
		// still come back before calls served, which hold the service time.
		if r, o := percentile(rejected, 0.5), percentile(served, 0.5); r >= o {
			problems = append(problems, fmt.Sprintf("median rejection latency at the client %v is not under the median served call's %v", r, o))
		}
	} else if p := percentile(rejected, 0.99); p > time.Millisecond {
		problems = append(problems, fmt.Sprintf("p99 rejection latency at the client %v is over 1 ms", p))
	}
	return problems
}

// TestMaxInFlight checks the bound with a deterministic load: while
// inFlight handlers are blocked, every further request is rejected with
// rpcerr.Overloaded, and once they finish requests are served again.
func TestMaxInFlight(t *testing.T) {
	const inFlight = 3
	release := make(chan struct{})
	started := make(chan struct{}, inFlight)
	s, addr := startWith(t, server.New(server.WithMaxInFlight(inFlight)), blockingEcho{started: started, release: release})
	cli, err := echotest.NewEchoClient("Echo", client.WithHostPorts(addr), client.WithMuxConnection(1), client.WithRPCTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	for i := 0; i < inFlight; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cli.Echo(context.Background(), &echotest.Request{Action: "block"})
			errs <- err
		}()
	}
	for i := 0; i < inFlight; i++ {
		<-started
	}
	for i := 0; i < 5; i++ {
		_, err := cli.Echo(context.Background(), &echotest.Request{Action: "echo"})
		if rpcerr.CodeOf(err) != rpcerr.Overloaded {
			t.Fatalf("request %d beyond the bound: %v, want overloaded", i, err)
		}
	}
	if got := s.Stats().InFlight; got != inFlight {
		t.Fatalf("Stats().InFlight = %d, want %d", got, inFlight)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a blocked request failed: %v", err)
		}
	}
	if _, err := cli.Echo(context.Background(), &echotest.Request{Action: "echo"}); err != nil {
		t.Fatalf("after the blocked requests finished: %v", err)
	}
	if st := s.Stats(); st.RejectedInFlight != 5 || st.RejectedQPS != 0 {
		t.Fatalf("RejectedInFlight %d RejectedQPS %d, want 5 0", st.RejectedInFlight, st.RejectedQPS)
	}
}

func TestMaxInFlightNegative(t *testing.T) {
	s := server.New(server.WithMaxInFlight(-1))
	if err := s.Run(); err == nil {
		t.Fatal("Run accepted WithMaxInFlight(-1)")
	}
}

// blockingEcho blocks "block" requests until release is closed.
type blockingEcho struct {
	started chan struct{}
	release chan struct{}
}

func (b blockingEcho) Echo(ctx context.Context, req *echotest.Request) (*echotest.Response, error) {
	if req.Action == "block" {
		b.started <- struct{}{}
		<-b.release
	}
	return &echotest.Response{Action: req.Action}, nil
}

func (b blockingEcho) Notify(ctx context.Context, msg string) error { return nil }
