package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
)

// The gonet server is the idiomatic Go standard library echo: net.Listen,
// one goroutine per connection, a 64 KiB bufio.Reader, io.ReadFull of one
// message into a buffer owned by the connection, and one conn.Write per
// message. It allocates nothing per request.
func init() {
	register("gonet", func(size int) (echoServer, error) {
		return &gonetServer{size: size, conns: map[net.Conn]struct{}{}}, nil
	})
}

type gonetServer struct {
	size int

	mu     sync.Mutex            // guards ln, conns, closed
	ln     net.Listener          // guarded by mu
	conns  map[net.Conn]struct{} // guarded by mu
	closed bool                  // guarded by mu
	wg     sync.WaitGroup        // connection goroutines
}

func (s *gonetServer) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return nil
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

func (s *gonetServer) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	msg := make([]byte, s.size)
	for {
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		if _, err := c.Write(msg); err != nil {
			return
		}
	}
}

func (s *gonetServer) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
