package client_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// serverEnv makes the test binary run only the test server (for the
// benchmarks, whose allocation counts must not include the server's).
const serverEnv = "PETREL_CLIENT_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
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

// startServerProcess runs the test server in a child process and returns its
// address.
func startServerProcess(tb testing.TB) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
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
