package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// churn dials addr n times, at most parallel connections at once, hands
// each connection and its index (0 to n-1) to use, then closes it; it
// returns once every connection is closed. A failed dial is a t.Error.
func churn(t *testing.T, addr string, n, parallel int, use func(i int, tc *net.TCPConn)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			tc := c.(*net.TCPConn)
			defer tc.Close()
			use(i, tc)
		}(i)
	}
	wg.Wait()
}

// TestConnectionCountDoesNotDrift opens and closes 1,000 connections in
// varied ways, some over WithMaxConnections, and checks that the count of
// open connections comes back to 0 and the limit admits as many again.
func TestConnectionCountDoesNotDrift(t *testing.T) {
	const limit = 20
	s, _, addr := startServer(t, server.WithMaxConnections(limit))
	halfFrame := make([]byte, 6)
	binary.BigEndian.PutUint32(halfFrame, 100) // a frame of 100 bytes, 2 sent
	// 40 at once: more than the limit.
	churn(t, addr, 1000, 40, func(i int, tc *net.TCPConn) {
		switch i % 4 {
		case 0: // closed before a byte is sent
		case 1: // half a frame, then closed
			tc.Write(halfFrame)
		case 2: // reset
			tc.SetLinger(0)
		case 3: // half a frame, then reset
			tc.Write(halfFrame)
			tc.SetLinger(0)
		}
	})
	if got := waitStat(func() int64 { return s.Stats().Connections }, 0); got != 0 {
		t.Fatalf("Stats().Connections = %d after every connection closed, want 0", got)
	}
	// The limit admits limit connections again, and serves them.
	var cs []*testConn
	for i := 0; i < limit; i++ {
		cs = append(cs, dial(t, addr, protocols[i%len(protocols)]))
	}
	for i, c := range cs {
		if res, _ := c.call(int32(i+1), "echo", "again", nil); res.Success.GetMsg() != "again" {
			t.Fatalf("connection %d after the churn: %+v", i, res)
		}
	}
	if got := s.Stats().Connections; got != limit {
		t.Fatalf("Stats().Connections = %d with %d open, want %d", got, limit, limit)
	}
}

// TestStopExpiredContextLeaksNothing: Stop with a context already ended,
// with connections open and a call in flight, returns the context's error
// and, once the handler is done, leaves no goroutine behind.
func TestStopExpiredContextLeaksNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New()
	h := &handler{}
	if err := s.RegisterService(echotest.EchoServiceInfo, h); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	addr := ln.Addr().String()
	idle := dial(t, addr, transport.Framed)
	idle.call(1, "echo", "x", nil)
	busy := dial(t, addr, transport.TTHeader)
	if err := busy.send("echo", thrift.CALL, 1, &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "sleep", Msg: "100ms"}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := waitStat(func() int64 { return s.Stats().InFlight }, 1); got != 1 {
		t.Fatalf("InFlight = %d", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stop(ended context) = %v, want context.Canceled", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("Stop again: %v", err)
	}
	if err := s.Run(); !errors.Is(err, server.ErrServerStopped) {
		t.Fatalf("Run after Stop = %v, want ErrServerStopped", err)
	}
	if got := waitStat(func() int64 { return s.Stats().InFlight }, 0); got != 0 {
		t.Fatalf("InFlight = %d after the handler ended", got)
	}
	if got := waitStat(func() int64 { return s.Stats().Connections }, 0); got != 0 {
		t.Fatalf("Connections = %d after Stop", got)
	}
}

// TestStopRacingServe: Stop before Serve makes Serve fail
// with ErrServerStopped and close its listener; Stop racing Serve's start
// always ends with Serve returned and nothing left serving.
func TestStopRacingServe(t *testing.T) {
	for i := 0; i < 50; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := server.New()
		if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- s.Serve(ln) }()
		if i%2 == 0 {
			runtime.Gosched()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := s.Stop(ctx); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		cancel()
		timer := time.NewTimer(5 * time.Second)
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, server.ErrServerStopped) {
				t.Fatalf("Serve: %v", err)
			}
		case <-timer.C:
			t.Fatal("Serve did not return after Stop")
		}
		timer.Stop()
		if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
			c.Close()
			t.Fatal("the listener still accepts after Stop and Serve returned")
		}
	}
}
