package hello_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/examples/hello/handler"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// genModule is the import path of gen/.
const genModule = "github.com/petrel-rpc/petrel/examples/hello/gen"

// TestGeneratedCodeIsCurrent regenerates gen/ with `petrel gen` from this
// checkout and fails on any difference (the command to update it is in
// doc.go).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cmd/petrel")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "github.com/petrel-rpc/petrel/cmd/petrel", "gen", "-out", out, "-module", genModule, "hello.thrift")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("petrel gen: %v\n%s", err, msg)
	}
	want, got := readTree(t, out), readTree(t, "gen")
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("gen/%s is missing; petrel gen writes it", name)
		case !bytes.Equal(g, w):
			t.Errorf("gen/%s differs from what petrel gen writes now; regenerate it (see doc.go)", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("gen/%s is not written by petrel gen any more; remove it", name)
		}
	}
}

// readTree returns the contents of every file under dir by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// testHandler is handler.Handler with a few ways to fail added to Greet
// and Echo, to exercise the generated glue on both sides.
type testHandler struct {
	handler.Handler
}

var errBoom = errors.New("boom")

func (h *testHandler) Greet(ctx context.Context, name string) (string, error) {
	switch name {
	case "wrapped":
		return "", fmt.Errorf("checking %q: %w", name, &hello.InvalidName{Name: name, Reason: "wrapped"})
	case "boom":
		return "", errBoom
	case "deadline":
		d, ok := ctx.Deadline()
		if !ok {
			return "", errors.New("no deadline in the handler's context")
		}
		return time.Until(d).Round(time.Second).String(), nil
	}
	return h.Handler.Greet(ctx, name)
}

func (h *testHandler) Echo(ctx context.Context, req *hello.EchoRequest) (*hello.EchoResponse, error) {
	if req.GetAction() == "nil" {
		return nil, nil
	}
	return h.Handler.Echo(ctx, req)
}

// start serves h on a free loopback port until the test ends.
func start(t *testing.T, h hello.Hello) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := hello.NewHelloServer(h, server.WithListener(ln))
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		// Run returns ErrServerStopped if Stop came first.
		if err := <-done; err != nil && !errors.Is(err, server.ErrServerStopped) {
			t.Errorf("Run: %v", err)
		}
	})
	// One call before the test goes on, so that Stop never races with Run
	// starting up (netpoll's Serve and Shutdown race when they overlap).
	c, err := hello.NewHelloClient("hello", client.WithHostPorts(ln.Addr().String()), client.WithShortConnection())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Greet(context.Background(), "start"); err != nil {
		t.Fatalf("first call: %v", err)
	}
	return ln.Addr().String()
}

// TestEndToEnd calls every method through the generated client and server
// over each client pool and transport.
func TestEndToEnd(t *testing.T) {
	h := &testHandler{}
	addr := start(t, h)
	configs := []struct {
		name string
		opts []client.Option
	}{
		{"long/ttheader", nil},
		{"mux/ttheader", []client.Option{client.WithMuxConnection(2)}},
		{"short/framed", []client.Option{client.WithShortConnection(), client.WithTransport(transport.Framed)}},
		{"long/buffered", []client.Option{client.WithTransport(transport.Buffered)}},
	}
	for i, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			c, err := hello.NewHelloClient("hello", append([]client.Option{client.WithHostPorts(addr)}, cfg.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()

			resp, err := c.Echo(ctx, &hello.EchoRequest{Action: "say", Msg: "hi"})
			if err != nil || resp.Action != "say" || resp.Msg != "hi" {
				t.Fatalf("Echo = %v, %v", resp, err)
			}
			if g, err := c.Greet(ctx, "world"); err != nil || g != "hello, world" {
				t.Fatalf("Greet(world) = %q, %v", g, err)
			}

			for _, name := range []string{"", "wrapped"} {
				_, err := c.Greet(ctx, name)
				var invalid *hello.InvalidName
				if !errors.As(err, &invalid) || invalid.Name != name {
					t.Fatalf("Greet(%q): err %v (%T), want *hello.InvalidName", name, err, err)
				}
				if code := rpcerr.CodeOf(err); code != rpcerr.Declared {
					t.Errorf("Greet(%q): rpcerr.CodeOf = %v, want Declared", name, code)
				}
			}

			_, err = c.Greet(ctx, "boom")
			var appEx *thrift.ApplicationException
			if !errors.As(err, &appEx) || !strings.Contains(err.Error(), "boom") || rpcerr.CodeOf(err) != rpcerr.Application {
				t.Errorf("Greet(boom): err %v (%T), want an application exception saying boom", err, err)
			}

			_, err = c.Echo(ctx, &hello.EchoRequest{Action: "nil"})
			if !errors.As(err, &appEx) || appEx.Type != thrift.ExceptionMissingResult {
				t.Errorf("Echo returning nil: err %v, want a missing-result application exception", err)
			}

			if cfg.name != "short/framed" && cfg.name != "long/buffered" {
				// Only TTHeader carries the deadline to the server.
				g, err := c.Greet(ctx, "deadline", client.WithCallTimeout(3*time.Second))
				if err != nil || g != "3s" {
					t.Errorf("Greet with a 3s call timeout: handler saw %q, %v; want 3s", g, err)
				}
			}

			event := fmt.Sprintf("event %d", i)
			if err := c.Notify(ctx, event); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			events, err := h.WaitEvents(wctx, i+1)
			if err != nil || events[i] != event {
				t.Fatalf("events %q, %v; want %q last", events, err, event)
			}
		})
	}
}

// TestCanceled checks that a canceled context fails the call with the
// client's error, not a declared exception.
func TestCanceled(t *testing.T) {
	addr := start(t, &testHandler{})
	c, err := hello.NewHelloClient("hello", client.WithHostPorts(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Greet(ctx, "world")
	var invalid *hello.InvalidName
	if err == nil || errors.As(err, &invalid) {
		t.Fatalf("Greet with a canceled context: err %v", err)
	}
}

// BenchmarkEcho measures one Echo call through the generated client and
// server over loopback (long pool, TTHeader); -benchmem shows the
// allocations of both sides together.
func BenchmarkEcho(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := hello.NewHelloServer(new(handler.Handler), server.WithListener(ln))
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	defer func() {
		s.Stop(context.Background())
		<-done
	}()
	c, err := hello.NewHelloClient("hello", client.WithHostPorts(ln.Addr().String()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	req := &hello.EchoRequest{Action: "bench", Msg: strings.Repeat("m", 64)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Echo(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
