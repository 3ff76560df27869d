package client_test

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// rawServer accepts connections on a loopback port and hands each, with
// its number (1 for the first), to serve on a goroutine of its own. When
// the test ends it closes its listener and every connection it accepted or
// tracked, and waits for the serve goroutines. got carries the signals
// serve sends.
type rawServer struct {
	ln       net.Listener
	got      chan struct{}
	accepted atomic.Int32

	mu    sync.Mutex
	conns []net.Conn // guarded by mu
	wg    sync.WaitGroup
}

func startRawServer(t *testing.T, serve func(s *rawServer, n int32, conn net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, got: make(chan struct{}, 16)}
	var accepting sync.WaitGroup
	accepting.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.track(conn)
			n := s.accepted.Add(1)
			s.wg.Go(func() { serve(s, n, conn) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		accepting.Wait()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) addr() string { return s.ln.Addr().String() }

// track keeps c to close when the test ends.
func (s *rawServer) track(c net.Conn) {
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
}

// startSilentServer starts a server that never answers: it reads what it is
// sent and signals each connection's first bytes on got.
func startSilentServer(t *testing.T) *rawServer {
	return startRawServer(t, func(s *rawServer, _ int32, conn net.Conn) { s.readSilently(conn) })
}

// readSilently reads conn until it fails, signalling its first bytes on got.
func (s *rawServer) readSilently(conn net.Conn) {
	b := make([]byte, 4096)
	first := true
	for {
		if _, err := conn.Read(b); err != nil {
			return
		}
		if first {
			first = false
			s.got <- struct{}{}
		}
	}
}

// startDeafServer starts a server that never reads, so a large request
// fills the socket and its Flush waits for room. Each accept is signalled
// on got.
func startDeafServer(t *testing.T) *rawServer {
	return startRawServer(t, func(s *rawServer, _ int32, _ net.Conn) { s.got <- struct{}{} })
}

// startFlipServer starts a server that leaves the first connection it
// accepts unanswered (as startSilentServer's) and passes every later one
// through to the server at live: a call canceled on the first connection
// is followed by calls that must not be sent on it.
func startFlipServer(t *testing.T, live string) *rawServer {
	return startRawServer(t, func(s *rawServer, n int32, conn net.Conn) {
		if n == 1 {
			s.readSilently(conn)
			return
		}
		up, err := net.Dial("tcp", live)
		if err != nil {
			conn.Close()
			return
		}
		s.track(up)
		pass := func(dst, src net.Conn) {
			io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		s.wg.Go(func() { pass(up, conn) })
		pass(conn, up)
	})
}
