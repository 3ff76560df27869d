package client_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/server"

	"go.uber.org/goleak"
)

// serverEnv makes the test binary run only the test server (for the
// benchmarks, whose allocation counts must not include the server's).
const serverEnv = "PETREL_CLIENT_TEST_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(serverEnv) {
	case "":
	case "petrel":
		runPetrelProcess()
		return
	default:
		runServerProcess()
		return
	}
	goleak.VerifyTestMain(m)
}

// runServerProcess serves until stdin closes, after printing the address.
func runServerProcess() {
	s, err := newTestServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(s.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n') // returns at EOF
	s.Close()
	os.Exit(0)
}

// runPetrelProcess serves the test service with Petrel's server until stdin
// closes, after printing the address.
func runPetrelProcess() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := server.New(server.WithListener(ln))
	if err := s.RegisterService(echoServiceInfo, &petrelEcho{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go s.Run()
	fmt.Println(ln.Addr().String())
	bufio.NewReader(os.Stdin).ReadString('\n') // returns at EOF
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Stop(ctx)
	os.Exit(0)
}

// startServerProcess runs a server in a child process and returns its
// address: the test server, or Petrel's server when kind is "petrel".
func startServerProcess(tb testing.TB, kind string) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"="+kind)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("server process: %v", err)
	}
	return strings.TrimSpace(line)
}
