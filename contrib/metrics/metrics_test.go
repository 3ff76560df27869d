package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/contrib/internal/testsvc"
	"github.com/petrel-rpc/petrel/contrib/metrics"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
)

// TestScrape serves Hello with the server tracer, calls it through a client
// with the client tracer, and scrapes the metrics endpoint over HTTP.
func TestScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	s, addr := testsvc.Start(t, &testsvc.Echo{}, server.WithTracer(m.ServerTracer()), server.WithMaxQPS(1000))
	if err := m.WatchServer("hello", s); err != nil {
		t.Fatal(err)
	}
	cli, err := hello.NewHelloClient("Hello", client.WithHostPorts(addr), client.WithTracer(m.ClientTracer()))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if _, err := cli.Echo(ctx, &hello.EchoRequest{Action: "echo", Msg: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.Echo(ctx, &hello.EchoRequest{Action: "fail"}); rpcerr.CodeOf(err) != rpcerr.Application {
		t.Fatalf("fail: %v", err)
	}
	cli.Close()

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %v %s", err, res.Status)
	}
	text := string(body)
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
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if !strings.Contains(text, `petrel_request_bytes_total{method="echo",service="Hello",side="client"}`) {
		t.Error("scrape lacks the request bytes counter")
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "petrel_requests_total") {
			t.Logf("%s", line)
		}
	}
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
