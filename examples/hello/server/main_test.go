package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// build compiles this command into a temporary directory and returns the
// binary's path.
func build(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the server")
	}
	bin := filepath.Join(t.TempDir(), "server")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestPortInUse checks that a server whose address is taken exits with
// status 1 and says why, without first claiming to serve.
func TestPortInUse(t *testing.T) {
	bin := build(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-addr", ln.Addr().String()).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the server on a taken port: %v, want exit status 1\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("address already in use")) {
		t.Errorf("the server on a taken port did not say the address is in use:\n%s", out)
	}
	if bytes.Contains(out, []byte("serving")) {
		t.Errorf("the server on a taken port claimed to serve:\n%s", out)
	}
}

// TestSignalStopsGracefully starts the server on a free port (-addr
// 127.0.0.1:0), checks that it announces the port it listens on and answers
// there, then sends it SIGINT or SIGTERM: it must report that Stop has
// finished and exit with status 0.
func TestSignalStopsGracefully(t *testing.T) {
	bin := build(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stderr)
			var log []string
			next := func() string {
				if !lines.Scan() {
					return ""
				}
				log = append(log, lines.Text())
				return lines.Text()
			}
			first := next()
			_, addr, ok := strings.Cut(first, "serving Hello on ")
			if !ok {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the server's first line is %q, want \"serving Hello on ADDR\"", first)
			}
			if _, port, err := net.SplitHostPort(addr); err != nil || port == "0" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the server announced %q, not the address it listens on", addr)
			}

			c, err := hello.NewHelloClient("hello", client.WithHostPorts(addr))
			if err != nil {
				t.Fatal(err)
			}
			g, err := c.Greet(ctx, "world")
			c.Close()
			if err != nil || g != "hello, world" {
				t.Errorf("Greet(world) at the announced address = %q, %v", g, err)
			}

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for next() != "" {
			}
			err = cmd.Wait()
			out := strings.Join(log, "\n")
			if err != nil {
				t.Fatalf("after %v the server exited with %v, want status 0:\n%s", sig, err, out)
			}
			if !strings.HasSuffix(log[len(log)-1], "stopped") {
				t.Errorf("after %v the server's last line is %q, want it to report that Stop finished:\n%s", sig, log[len(log)-1], out)
			}
		})
	}
}
