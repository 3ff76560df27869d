package netpoll

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// failPoller makes the running poller of conns (registered with a private
// manager) fail, as it does when epoll_wait returns an error: epfd becomes
// a pipe's fd (epoll_wait: EINVAL), and a wake ends the wait in progress
// on the epoll instance it replaced. It returns the poller once every
// connection is closed.
func failPoller(t *testing.T, conns ...*connection) *poller {
	t.Helper()
	p := conns[0].op.poller
	pfds := make([]int, 2)
	if err := unix.Pipe2(pfds, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pfds[1])
	if err := unix.Dup3(pfds[0], p.sys.epfd, unix.O_CLOEXEC); err != nil {
		unix.Close(pfds[0])
		t.Fatal(err)
	}
	unix.Close(pfds[0])
	p.sys.wake()
	for _, c := range conns {
		for i := 0; c.state.Load() != stateClosed; i++ {
			if i == 2000 {
				t.Fatal("the poller did not fail")
			}
			time.Sleep(time.Millisecond)
		}
	}
	return p
}

// socketConn returns a connection over one end of a socket pair,
// registered with m, and the other end's fd, which closes when t ends.
func socketConn(t *testing.T, m *manager) (*connection, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	c := newConnection(fds[0], nil, nil, nil)
	if err := m.register(&c.op, wantRead); err != nil {
		unix.Close(fds[0])
		t.Fatal(err)
	}
	return c, fds[1]
}

// peerSeesClose reports whether the peer of a socket pair reads its end
// within d.
func peerSeesClose(peer int, d time.Duration) bool {
	pfd := []unix.PollFd{{Fd: int32(peer), Events: unix.POLLIN}}
	if n, err := unix.Poll(pfd, int(d/time.Millisecond)); n != 1 || err != nil {
		return false
	}
	var b [1]byte
	n, err := unix.Read(peer, b[:])
	return n == 0 && err == nil
}

// TestFailedPollerClosesFDs: when a poller's wait fails, run calls failAll,
// which closes every connection of the poller; each close retires the
// operator, for the poller to close its fd after its next batch. But the
// poller goroutine had ended: nothing freed them, and the sockets stayed
// open for good (the peer never saw the close). A failed poller now closes
// the fds of its operators itself: at once when no system call uses them,
// or when the last one ends.
func TestFailedPollerClosesFDs(t *testing.T) {
	m := &manager{n: 1}
	idle, idlePeer := socketConn(t, m)
	busy, busyPeer := socketConn(t, m)
	busy.op.acquire() // a system call in progress (a Flush)
	failPoller(t, idle, busy)
	t.Logf("closed with: %v", idle.errClosed())
	if !peerSeesClose(idlePeer, 2*time.Second) {
		t.Fatalf("the connection closed as its poller failed, but its socket is still open 2 s later: fd %d leaked", idle.op.fd)
	}
	if peerSeesClose(busyPeer, 0) {
		t.Fatal("a failed poller closed an fd a system call still uses")
	}
	busy.op.release() // the Flush ends
	if !peerSeesClose(busyPeer, 2*time.Second) {
		t.Fatalf("the last system call on the fd of a failed poller's connection ended, but the socket is still open 2 s later: fd %d leaked", busy.op.fd)
	}
}

// TestFailedPollerDoesNotWriteToItsWakeFD: a system call in progress on a
// connection of a poller that fails (a Flush holding the operator) ends
// after failAll has closed the poller's eventfd; its release retired the
// operator, and retire wrote 8 bytes to the poller's wake fd number, which
// the kernel may have given to another file since: here a new socket, whose
// peer read the bytes.
func TestFailedPollerDoesNotWriteToItsWakeFD(t *testing.T) {
	m := &manager{n: 1}
	c, _ := socketConn(t, m)
	c.op.acquire() // a Flush in progress
	p := failPoller(t, c)
	wakefd := p.sys.wakefd
	for i := 0; ; i++ {
		if _, err := unix.FcntlInt(uintptr(wakefd), unix.F_GETFD, 0); err == unix.EBADF {
			break // failAll has closed the poller's fds
		}
		if i == 2000 {
			c.op.release()
			t.Fatal("the failed poller did not close its wake fd")
		}
		time.Sleep(time.Millisecond)
	}
	// Another part of the process opens a socket, reusing the number: the
	// kernel gives out the lowest free one.
	reused := [2]int{-1, -1}
	for reused[0] < wakefd {
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			c.op.release()
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(sp[0]); unix.Close(sp[1]) })
		switch wakefd {
		case sp[0]:
			reused = [2]int{sp[0], sp[1]}
		case sp[1]:
			reused = [2]int{sp[1], sp[0]}
		default:
			reused[0] = max(sp[0], sp[1])
		}
	}
	c.op.release() // the Flush ends
	if reused[0] != wakefd {
		t.Skipf("fd %d, the failed poller's wake fd, was taken by another file", wakefd)
	}
	var b [16]byte
	if n, err := unix.Read(reused[1], b[:]); n > 0 {
		t.Fatalf("a socket that reused the failed poller's wake fd (%d) received % x from the poller", wakefd, b[:n])
	} else {
		t.Logf("reused fd %d: peer read %d, %v", wakefd, n, err)
	}
}
