package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/internal/testsvc"
	"github.com/petrel-rpc/petrel/contrib/metrics"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
)

// TestScrape serves Hello with the server tracer, calls it through a client
// with the client tracer, its pool and both kinds of breaker watched, and
// scrapes the metrics endpoint over HTTP: it finds every family (requests,
// latency histograms, in-flight, bytes, server counters, pool sizes,
// breaker states) with the values the calls made.
func TestScrape(t *testing.T) {
	start := time.Now()
	reg, m := newMetrics(t)
	// A call of action "block" waits in the handler until release closes.
	release := make(chan struct{})
	block := func(_ context.Context, req *hello.EchoRequest) error {
		if req.Action == "block" {
			<-release
		}
		return nil
	}
	s, addr := testsvc.Start(t, &testsvc.Echo{Next: block}, server.WithTracer(m.ServerTracer()), server.WithMaxQPS(1000))
	if err := m.WatchServer("hello", s); err != nil {
		t.Fatal(err)
	}
	methods, err := circuitbreak.NewGroup(circuitbreak.Config{})
	if err != nil {
		t.Fatal(err)
	}
	instances, err := circuitbreak.NewGroup(circuitbreak.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New("Hello", client.WithHostPorts(addr), client.WithTracer(m.ClientTracer()),
		client.WithLongConnection(client.LongPoolConfig{}),
		client.WithCircuitBreaker(methods, nil), client.WithInstanceBreaker(instances))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cli := hello.NewHelloClientFrom(c)
	for _, err := range []error{
		m.WatchPool("hello", c),
		m.WatchBreakerGroup("hello.methods", methods),
		m.WatchBreakerGroup("hello.instances", instances),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if _, err := cli.Echo(ctx, &hello.EchoRequest{Action: "echo", Msg: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.Echo(ctx, &hello.EchoRequest{Action: "fail"}); rpcerr.CodeOf(err) != rpcerr.Application {
		t.Fatalf("fail: %v", err)
	}

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	// The server records a call after writing its reply, so the client can
	// see the last reply before the server's counters hold it: scrape until
	// they do (or 2 s pass; the checks below then report what is missing).
	text := scrape(t, srv.URL)
	for end := time.Now().Add(2 * time.Second); !strings.Contains(text, `petrel_request_duration_seconds_count{method="echo",service="Hello",side="server"} 6`+"\n") && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
		text = scrape(t, srv.URL)
	}
	for _, want := range []string{
		`petrel_requests_total{code="ok",method="echo",service="Hello",side="client"} 5`,
		`petrel_requests_total{code="application",method="echo",service="Hello",side="client"} 1`,
		`petrel_requests_total{code="ok",method="echo",service="Hello",side="server"} 5`,
		`petrel_requests_total{code="internal",method="echo",service="Hello",side="server"} 1`,
		`petrel_request_duration_seconds_count{method="echo",service="Hello",side="client"} 6`,
		`petrel_request_duration_seconds_count{method="echo",service="Hello",side="server"} 6`,
		`petrel_in_flight_requests{method="echo",service="Hello",side="client"} 0`,
		`petrel_server_requests_read_total{server="hello"} 6`,
		`petrel_server_rejected_total{limit="qps",server="hello"} 0`,
		`petrel_server_in_flight{server="hello"} 0`,
		`petrel_server_connections{server="hello"} 1`,
		// Six calls in a row over the long pool: one connection, idle now.
		`petrel_client_pool_connections{client="hello",state="open"} 1`,
		`petrel_client_pool_connections{client="hello",state="idle"} 1`,
		`petrel_client_pool_addresses{client="hello"} 1`,
		// One failure in six calls: both breakers stay closed.
		`petrel_breaker_state{breaker="hello.methods",key="echo",state="closed"} 1`,
		`petrel_breaker_state{breaker="hello.methods",key="echo",state="open"} 0`,
		`petrel_breaker_calls_total{breaker="hello.methods",key="echo",outcome="allowed"} 6`,
		`petrel_breaker_state{breaker="hello.instances",key="` + addr + `",state="closed"} 1`,
		`petrel_breaker_calls_total{breaker="hello.instances",key="` + addr + `",outcome="allowed"} 6`,
		`petrel_breaker_opened_total{breaker="hello.instances",key="` + addr + `"} 0`,
		`petrel_request_duration_seconds_bucket{method="echo",service="Hello",side="client",le="+Inf"} 6`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if !strings.Contains(text, `petrel_request_bytes_total{method="echo",service="Hello",side="client"}`) {
		t.Error("scrape lacks the request bytes counter")
	}
	// The latency histograms hold six loopback calls: their sum is above
	// zero and below the test's own duration.
	for _, side := range []string{"client", "server"} {
		prefix := `petrel_request_duration_seconds_sum{method="echo",service="Hello",side="` + side + `"} `
		i := strings.Index(text, prefix)
		if i < 0 {
			t.Errorf("scrape lacks %s", prefix)
			continue
		}
		line := text[i+len(prefix):]
		line = line[:strings.IndexByte(line, '\n')]
		sum, err := strconv.ParseFloat(line, 64)
		if err != nil || sum <= 0 || sum > time.Since(start).Seconds() {
			t.Errorf("%s latency sum %q: want in (0, %v]", side, line, time.Since(start).Seconds())
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "petrel_requests_total") || strings.HasPrefix(line, "petrel_client_pool") || strings.HasPrefix(line, "petrel_breaker_state") {
			t.Logf("%s", line)
		}
	}

	// A call held in the handler: both in-flight gauges show it, and the
	// pool's one connection is in use, not idle.
	done := make(chan error, 1)
	go func() {
		_, err := cli.Echo(ctx, &hello.EchoRequest{Action: "block"})
		done <- err
	}()
	busy := []string{
		`petrel_in_flight_requests{method="echo",service="Hello",side="client"} 1`,
		`petrel_in_flight_requests{method="echo",service="Hello",side="server"} 1`,
		`petrel_server_in_flight{server="hello"} 1`,
		`petrel_client_pool_connections{client="hello",state="open"} 1`,
		`petrel_client_pool_connections{client="hello",state="idle"} 0`,
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		text, missing := scrape(t, srv.URL), ""
		for _, want := range busy {
			if !strings.Contains(text, want+"\n") {
				missing = want
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("with a call in flight the scrape lacks %s:\n%s", missing, text)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// newMetrics returns a fresh registry and Metrics registered in it.
func newMetrics(t *testing.T) (*prometheus.Registry, *metrics.Metrics) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	return reg, m
}

// scrape GETs the metrics endpoint at url.
func scrape(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %v %s", err, res.Status)
	}
	return string(body)
}

func TestNew(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(metrics.Config{Registerer: reg, Buckets: []float64{1, 0.5}}); err == nil {
		t.Fatal("decreasing buckets accepted")
	}
	if _, err := metrics.New(metrics.Config{Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.New(metrics.Config{Registerer: reg}); err == nil {
		t.Fatal("registering the same names twice succeeded")
	}
	if _, err := metrics.New(metrics.Config{Registerer: reg, Namespace: "other"}); err != nil {
		t.Fatalf("another namespace: %v", err)
	}
}

// TestNewFailsWhole: a New that fails on a name already taken leaves none of
// its collectors registered, so that a New after the conflict is gone works.
func TestNewFailsWhole(t *testing.T) {
	reg := prometheus.NewRegistry()
	// One of the later collectors, as New makes it (a registry remembers
	// a name's help and labels even after Unregister).
	taken := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "petrel", Name: "response_bytes_total",
		Help: "Bytes of response payloads (Thrift message bodies).",
	}, []string{"side", "service", "method"})
	if err := reg.Register(taken); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.New(metrics.Config{Registerer: reg}); err == nil {
		t.Fatal("New succeeded with a name taken")
	}
	reg.Unregister(taken)
	if _, err := metrics.New(metrics.Config{Registerer: reg}); err != nil {
		t.Fatalf("New once the name is free again: %v", err)
	}
}
