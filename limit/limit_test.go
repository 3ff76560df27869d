package limit_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/limit"
	"github.com/petrel-rpc/petrel/rpcerr"
)

func TestTokenBucketRate(t *testing.T) {
	const rate = 1000
	start := int64(1_000_000_000)
	b := limit.NewTokenBucket(rate, 10, start)
	// The full burst is available at once, then nothing.
	for i := 0; i < 10; i++ {
		if !b.Allow(start) {
			t.Fatalf("burst token %d refused", i)
		}
	}
	if b.Allow(start) {
		t.Fatal("11th request at the same instant admitted with a burst of 10")
	}
	// Over 2 s of steady offers every 100 µs (10 000 per second), about
	// 2 000 are admitted.
	admitted := 0
	for now := start; now < start+2e9; now += 100_000 {
		if b.Allow(now) {
			admitted++
		}
	}
	if admitted < 1990 || admitted > 2010 {
		t.Fatalf("admitted %d in 2 s at %d per second", admitted, rate)
	}
	// A clock going back adds nothing.
	if b.Allow(start) {
		t.Fatal("a time in the past refilled the bucket")
	}
	// Idle time refills up to the burst only.
	later := start + 10e9
	n := 0
	for b.Allow(later) {
		n++
	}
	if n != 10 {
		t.Fatalf("after an idle period %d tokens, want the burst 10", n)
	}
}

func TestTokenBucketDefaultBurst(t *testing.T) {
	b := limit.NewTokenBucket(50, 0, 0)
	n := 0
	for b.Allow(0) {
		n++
	}
	if n != 50 || b.Rate() != 50 {
		t.Fatalf("burst %d rate %d, want 50 50", n, b.Rate())
	}
}

func TestConcurrency(t *testing.T) {
	c := limit.NewConcurrency(8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	peak := int64(0)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				if c.TryAcquire() {
					n := c.Load()
					mu.Lock()
					peak = max(peak, n)
					mu.Unlock()
					c.Release()
				}
			}
		}()
	}
	wg.Wait()
	if peak > 8 || peak < 1 {
		t.Fatalf("peak holders %d with a bound of 8", peak)
	}
	if c.Load() != 0 || c.Max() != 8 {
		t.Fatalf("after all released: load %d max %d", c.Load(), c.Max())
	}
	var unbounded limit.Concurrency
	for i := 0; i < 100; i++ {
		if !unbounded.TryAcquire() {
			t.Fatal("the zero Concurrency refused")
		}
	}
	if unbounded.Load() != 100 {
		t.Fatalf("load %d", unbounded.Load())
	}
}

// TestConcurrencyOverRelease: a Release with no place held panics and
// leaves the count as it was, so the bound still holds afterwards.
func TestConcurrencyOverRelease(t *testing.T) {
	c := limit.NewConcurrency(1)
	if !c.TryAcquire() {
		t.Fatal("refused the first place")
	}
	c.Release()
	func() {
		defer func() {
			r := recover()
			if r == nil {
				t.Fatal("a second Release did not panic")
			}
			if msg, _ := r.(string); !strings.Contains(msg, "without a matching TryAcquire") {
				t.Fatalf("panic %v", r)
			}
		}()
		c.Release()
	}()
	if c.Load() != 0 {
		t.Fatalf("load %d after the refused Release, want 0", c.Load())
	}
	first, second := c.TryAcquire(), c.TryAcquire()
	if !first || second {
		t.Fatalf("TryAcquire twice after the refused Release: %v, %v; want true, false (a bound of 1)", first, second)
	}
}

func TestLimiter(t *testing.T) {
	l, err := limit.New(limit.Config{MaxConnections: 2, MaxQPS: 3, MaxInFlight: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !l.NeedsClock() {
		t.Fatal("NeedsClock false with a QPS limit")
	}
	if !l.AcquireConn() || !l.AcquireConn() || l.AcquireConn() {
		t.Fatal("connections: want 2 admitted, the third refused")
	}
	l.ReleaseConn()
	if l.Connections() != 1 || !l.AcquireConn() {
		t.Fatal("a released connection's place is not free again")
	}
	if r := l.AcquireRequest(0); r != limit.None {
		t.Fatalf("first request: %v", r)
	}
	if r := l.AcquireRequest(0); r != limit.None {
		t.Fatalf("second request: %v", r)
	}
	if r := l.AcquireRequest(0); r != limit.InFlight {
		t.Fatalf("third request in flight: %v, want in_flight", r)
	}
	l.ReleaseRequest()
	l.ReleaseRequest()
	// One token left of three: the in-flight refusal took none.
	if r := l.AcquireRequest(0); r != limit.None {
		t.Fatalf("after release: %v", r)
	}
	l.ReleaseRequest()
	if r := l.AcquireRequest(0); r != limit.QPS {
		t.Fatalf("bucket empty: %v, want qps", r)
	}
	if l.InFlight() != 0 {
		t.Fatalf("a QPS refusal holds an in-flight place: %d", l.InFlight())
	}
	if l.Limit(limit.QPS) != 3 || l.Limit(limit.InFlight) != 2 || l.Limit(limit.Connections) != 2 || l.Limit(limit.None) != 0 {
		t.Fatal("Limit does not return the configured bounds")
	}
	free, _ := limit.New(limit.DefaultConfig(), 0)
	if free.NeedsClock() {
		t.Fatal("NeedsClock true without a QPS limit")
	}
	for i := 0; i < 1000; i++ {
		if free.AcquireRequest(0) != limit.None || !free.AcquireConn() {
			t.Fatal("a Limiter without limits refused")
		}
	}
	if free.InFlight() != 1000 || free.Connections() != 1000 {
		t.Fatal("a Limiter without limits does not count")
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []limit.Config{{MaxConnections: -1}, {MaxQPS: -1}, {QPSBurst: -2}, {MaxInFlight: -3}} {
		if _, err := limit.New(c, 0); err == nil || !strings.Contains(err.Error(), "must be 0") {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestReasonErr(t *testing.T) {
	if limit.None.Err(1) != nil {
		t.Fatal("None.Err is not nil")
	}
	for _, c := range []struct {
		r    limit.Reason
		want string
	}{
		{limit.Connections, "WithMaxConnections"},
		{limit.QPS, "WithMaxQPS"},
		{limit.InFlight, "WithMaxInFlight"},
	} {
		err := c.r.Err(7)
		if rpcerr.CodeOf(err) != rpcerr.Overloaded || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "7") {
			t.Errorf("%v: %v", c.r, err)
		}
		// The text is what a client recognises in the server's exception.
		if code, ok := rpcerr.CodeFromMessage(err.Error()); !ok || code != rpcerr.Overloaded {
			t.Errorf("%v: CodeFromMessage(%q) = %v %v", c.r, err, code, ok)
		}
		if !errors.Is(err, &rpcerr.Error{Code: rpcerr.Overloaded}) {
			t.Errorf("%v: errors.Is Overloaded false", c.r)
		}
	}
	if limit.Reason(9).String() != "reason_9" || limit.InFlight.String() != "in_flight" {
		t.Fatal("Reason.String")
	}
}

func BenchmarkAcquireRequest(b *testing.B) {
	start := time.Now()
	l, _ := limit.New(limit.Config{MaxQPS: 1 << 30, MaxInFlight: 1 << 20}, 0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if l.AcquireRequest(int64(time.Since(start))) == limit.None {
				l.ReleaseRequest()
			}
		}
	})
}

// TestMessage: the rejection text made once is that of Reason.Err, and
// handing it out allocates nothing.
func TestMessage(t *testing.T) {
	l, err := limit.New(limit.Config{MaxConnections: 5, MaxQPS: 100, MaxInFlight: 7}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []limit.Reason{limit.Connections, limit.QPS, limit.InFlight} {
		if got, want := l.Message(r), r.Err(l.Limit(r)).Error(); got != want {
			t.Errorf("%v: Message %q, want %q", r, got, want)
		}
	}
	if !strings.Contains(l.Message(limit.InFlight), "more than 7 requests in flight") {
		t.Errorf("in-flight message %q does not name the bound", l.Message(limit.InFlight))
	}
	if l.Message(limit.None) != "" || l.Message(limit.Reason(9)) != "" {
		t.Error("a message for None or an unknown reason")
	}
	if n := testing.AllocsPerRun(100, func() { _ = l.Message(limit.QPS) }); n != 0 {
		t.Errorf("Message allocates %v times", n)
	}
}
