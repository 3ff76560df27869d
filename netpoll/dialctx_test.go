//go:build linux

package netpoll_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/petrel-rpc/petrel/netpoll"
)

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list fds: %v", err)
	}
	return len(ents)
}

// waitFDs waits until at most want fds are open (a closed connection's fd is
// closed by its poller after its current batch) and fails after 5 s.
func waitFDs(t *testing.T, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := openFDs(t)
		if n <= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d fds open, want at most %d", what, n, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDialEndedContext checks that a dial whose context has already ended
// fails with the context's error, as net.Dialer's does, whatever the peer
// (a Unix socket connects at once, a loopback TCP connect within
// microseconds), and leaves no fd behind.
func TestDialEndedContext(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	sock := filepath.Join(t.TempDir(), "s")
	unixLn, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer unixLn.Close()
	// Accept (and close) whatever connects, so that the backlog never fills.
	go closeAccepted(tcp)
	go closeAccepted(unixLn)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()

	before := openFDs(t)
	var d netpoll.Dialer
	for _, tc := range []struct {
		network, addr string
	}{{"unix", sock}, {"tcp", tcp.Addr().String()}} {
		for i := range 20 {
			c, err := d.DialContext(canceled, tc.network, tc.addr)
			if err == nil {
				c.Close()
				t.Fatalf("%s dial %d with a canceled context succeeded", tc.network, i)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s dial with a canceled context: %v, want context.Canceled", tc.network, err)
			}
			c, err = d.DialContext(expired, tc.network, tc.addr)
			if err == nil {
				c.Close()
				t.Fatalf("%s dial %d with an expired context succeeded", tc.network, i)
			}
			if !netpoll.IsTimeout(err) {
				t.Fatalf("%s dial with an expired context: %v, want a timeout", tc.network, err)
			}
		}
	}
	waitFDs(t, before, "after dials with ended contexts")
}

// TestDialTimeoutWhileConnecting checks that a dial whose context ends while
// the connect is in progress (a listener whose accept queue is full drops
// the SYN) returns a timeout and closes its socket.
func TestDialTimeoutWhileConnecting(t *testing.T) {
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(lfd, 0); err != nil { // never accepted
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(lfd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))

	before := openFDs(t)
	var established []netpoll.Connection
	timeouts := 0
	for range 10 {
		d := netpoll.Dialer{Timeout: 50 * time.Millisecond}
		c, err := d.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			established = append(established, c) // went into the queue
			continue
		}
		if !netpoll.IsTimeout(err) {
			t.Fatalf("dial to a full accept queue: %v, want a timeout", err)
		}
		timeouts++
	}
	if timeouts == 0 {
		t.Skip("the kernel accepted every connect; nothing to time out")
	}
	for _, c := range established {
		c.Close()
	}
	waitFDs(t, before, "after dials that timed out")
}
